<?php
/**
 * Deactivate keeps, uninstall removes; the upgrade routine runs once per new version.
 */

use PHPUnit\Framework\TestCase;

final class InstallTest extends TestCase {
	protected function setUp(): void {
		$GLOBALS['tender_test_options'] = array();
		$GLOBALS['tender_test_cron']    = array();
		$GLOBALS['wpdb']->queries       = array();
		update_option( Tender_Settings::GATEWAY_SETTINGS, array( 'enabled' => 'yes', 'api_base_url' => 'https://tender.test' ) );
		Tender_Settings::save_connection( array( 'api_key' => 'sk_live_dedicated', 'webhook_secret' => str_repeat( 'a', 64 ), 'integration_public_id' => 'int_1', 'store_name' => 'Shop' ), 1_800_000_000 );
	}

	public function test_activation_makes_the_table_and_schedules_both_events(): void {
		Tender_Install::activate();
		$this->assertStringContainsString( 'CREATE TABLE wp_tender_seen_events (', $GLOBALS['wpdb']->queries[0] );
		$this->assertStringContainsString( 'PRIMARY KEY  (event_id)', $GLOBALS['wpdb']->queries[0] );   // dbDelta's format
		$this->assertSame( array( 'daily', 'tender_every_five_minutes' ), array_column( array_values( $GLOBALS['tender_test_cron'] ), 'recurrence' ) );
		$this->assertSame( TENDER_PLUGIN_VERSION, get_option( Tender_Settings::VERSION ) );
	}

	public function test_deactivation_stops_the_events_and_keeps_settings_and_credentials(): void {
		Tender_Install::activate();
		$before = $GLOBALS['tender_test_options'];
		Tender_Install::deactivate();
		$this->assertSame( array(), $GLOBALS['tender_test_cron'] );
		$this->assertSame( $before, $GLOBALS['tender_test_options'] );
		$this->assertTrue( Tender_Settings::is_connected() );
	}

	public function test_uninstall_disconnects_then_removes_every_option_table_and_event(): void {
		Tender_Install::activate();
		update_option( Tender_Settings::REFUNDS_PROBE, array( 'available' => true, 'at' => 1 ) );
		update_option( Tender_Settings::RECONCILED, 1 );
		update_option( 'woocommerce_currency', 'USD' );   // WooCommerce's own: kept
		$tender = ( new Scripted_Transport() )->then( 200, array( 'disconnected' => true ) );
		Tender_Install::uninstall( new Tender_Connection( static fn ( string $key ) => $tender->api( $key ) ) );
		$this->assertSame( array( 'POST /v1/integration/woocommerce/disconnect' ), $tender->paths() );
		$this->assertSame( 'Bearer sk_live_dedicated', $tender->requests[0]['headers']['Authorization'] );
		$this->assertSame( array( 'woocommerce_currency' => 'USD' ), $GLOBALS['tender_test_options'] );
		$this->assertSame( array(), $GLOBALS['tender_test_cron'] );
		$this->assertSame( 'DROP TABLE IF EXISTS wp_tender_seen_events', end( $GLOBALS['wpdb']->queries ) );
	}

	public function test_uninstall_still_cleans_up_when_tender_is_unreachable(): void {
		$tender = ( new Scripted_Transport() )->then( 0, 'connection refused' );
		Tender_Install::uninstall( new Tender_Connection( static fn ( string $key ) => $tender->api( $key ) ) );
		$this->assertSame( array(), $GLOBALS['tender_test_options'] );
	}

	public function test_the_upgrade_runs_once_when_the_stored_version_differs(): void {
		update_option( Tender_Settings::VERSION, '1.0.0' );   // a 1.0.0 install, its files replaced
		update_option( Tender_Settings::REFUNDS_PROBE, array( 'available' => false, 'at' => 1 ) );
		Tender_Install::maybe_upgrade();
		$this->assertSame( TENDER_PLUGIN_VERSION, get_option( Tender_Settings::VERSION ) );
		$this->assertFalse( get_option( Tender_Settings::REFUNDS_PROBE ) );
		$this->assertNotFalse( wp_next_scheduled( Tender_Reconciliation::HOOK ) );   // the new event exists
		$GLOBALS['wpdb']->queries = array();
		Tender_Install::maybe_upgrade();
		$this->assertSame( array(), $GLOBALS['wpdb']->queries );                    // once
	}
}
