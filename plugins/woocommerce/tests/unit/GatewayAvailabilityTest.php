<?php
/**
 * Tender is offered at checkout (the classic gateway and the Checkout block alike) only while the
 * shop is connected and its currency is one Tender's status answer lists in supported_currencies.
 */

use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/wc-gateway-stubs.php';

final class GatewayAvailabilityTest extends TestCase {
	private Scripted_Transport $tender;

	protected function setUp(): void {
		$GLOBALS['tender_test_options'] = array(
			Tender_Settings::GATEWAY_SETTINGS => array( 'enabled' => 'yes', 'api_base_url' => 'https://tender.test/' ),
		);
		$this->tender = new Scripted_Transport();
	}

	/** Connected, then Tender's status answer saying which currencies it prices invoices in. */
	private function connected_with( ?array $currencies ): void {
		$connection = new Tender_Connection( fn ( string $key ) => $this->tender->api( $key ), fn () => 1780315200 );
		$this->tender->then(
			200,
			array(
				'store_id' => 'st', 'store_name' => 'Lumen Coffee', 'integration_public_id' => 'int_abc', 'installation_id' => 'inst_1',
				'site_url' => 'https://shop.test', 'webhook_url' => 'https://shop.test/?wc-api=tender', 'api_key' => 'sk_live_one',
				'webhook_secret' => 'secret1', 'status' => 'ACTIVE', 'credentials_rotated' => false, 'payout_configured' => true,
			)
		)->then( 200, array( 'status' => 'ACTIVE', 'payout_configured' => true ) + ( null === $currencies ? array() : array( 'supported_currencies' => $currencies ) ) );
		$connection->connect( 'sk_live_bootstrap', array( 'site_url' => 'https://shop.test', 'webhook_url' => 'https://shop.test/?wc-api=tender' ) );
		$connection->refresh_status();
	}

	/** [classic gateway offered, Checkout block offered] for a shop in this currency. */
	private static function offered_in( string $currency ): array {
		update_option( 'woocommerce_currency', $currency );
		$block = new Tender_Blocks_Payment_Method();
		$block->initialize();
		return array( ( new Tender_Gateway() )->is_available(), $block->is_active() );
	}

	public function test_offered_only_in_a_currency_tender_takes(): void {
		$this->connected_with( array( 'USD', 'EUR' ) );
		$this->assertSame( array( true, true ), self::offered_in( 'EUR' ) );
		$this->assertSame( array( true, true ), self::offered_in( 'USD' ) );
		$this->assertSame( array( false, false ), self::offered_in( 'JPY' ) );
	}

	public function test_a_tender_that_lists_no_currencies_leaves_the_currency_unchecked(): void {
		$this->connected_with( null );
		$this->assertSame( array( true, true ), self::offered_in( 'JPY' ) );
	}

	public function test_not_offered_unconnected_or_disabled_whatever_the_currency(): void {
		$this->assertSame( array( false, false ), self::offered_in( 'USD' ) );
		$this->connected_with( array( 'USD' ) );
		update_option( Tender_Settings::GATEWAY_SETTINGS, array( 'enabled' => 'no', 'api_base_url' => 'https://tender.test/' ) );
		$this->assertSame( array( false, false ), self::offered_in( 'USD' ) );
	}
}
