<?php
/**
 * Settings handling: connect keeps the three credentials in options (and nowhere else), a lost
 * answer is retried with exactly the same request, reconnect rotates, disconnect forgets.
 */

use PHPUnit\Framework\TestCase;

final class ConnectionTest extends TestCase {
	private const SITE = array( 'site_url' => 'https://shop.test', 'webhook_url' => 'https://shop.test/?wc-api=tender', 'plugin_version' => '1.0.0' );

	private int $now = 1780315200;
	private Scripted_Transport $tender;
	private array $keys_used = array();

	protected function setUp(): void {
		$GLOBALS['tender_test_options'] = array( Tender_Settings::GATEWAY_SETTINGS => array( 'api_base_url' => 'https://tender.test/' ) );
		$this->tender    = new Scripted_Transport();
		$this->keys_used = array();
	}

	private function connection(): Tender_Connection {
		return new Tender_Connection(
			function ( string $key ) {
				$this->keys_used[] = $key;
				return $this->tender->api( $key );
			},
			fn () => $this->now
		);
	}

	private static function answer( string $key, string $secret, bool $rotated = false, bool $payout = true ): array {
		return array(
			'store_id' => 'st', 'store_name' => 'Lumen Coffee', 'integration_public_id' => 'int_abc', 'installation_id' => 'inst_1',
			'site_url' => 'https://shop.test', 'webhook_url' => 'https://shop.test/?wc-api=tender', 'api_key' => $key,
			'webhook_secret' => $secret, 'status' => 'ACTIVE', 'credentials_rotated' => $rotated, 'payout_configured' => $payout,
		) + ( $payout ? array() : array( 'warning' => 'no payout wallet' ) );
	}

	public function test_connect_keeps_the_credentials_apart_from_the_summary(): void {
		$this->tender->then( 200, self::answer( 'sk_live_dedicated', 'secret1' ) );
		$summary = $this->connection()->connect( ' sk_live_bootstrap ', self::SITE );
		$this->assertSame( array( 'sk_live_bootstrap' ), $this->keys_used );
		$this->assertSame( self::SITE, json_decode( $this->tender->requests[0]['body'], true ) );
		$this->assertSame( 'https://tender.test/v1/integration/woocommerce/connect', $this->tender->requests[0]['url'] );
		$this->assertSame( array( 'sk_live_dedicated', 'secret1', 'int_abc' ), array( Tender_Settings::api_key(), Tender_Settings::webhook_secret(), Tender_Settings::integration_id() ) );
		$this->assertTrue( Tender_Settings::is_connected() );
		$this->assertSame( 'Lumen Coffee', $summary['store_name'] );
		$flat = json_encode( $summary );
		foreach ( array( 'sk_live_dedicated', 'secret1', 'sk_live_bootstrap' ) as $secret ) {
			$this->assertStringNotContainsString( $secret, $flat );
		}
		$this->assertNull( Tender_Settings::pending_connect() );
	}

	public function test_no_payout_wallet_is_remembered_for_the_warning(): void {
		$this->tender->then( 200, self::answer( 'k', 's', false, false ) );
		$this->assertFalse( $this->connection()->connect( 'sk_live_bootstrap', self::SITE )['payout_configured'] );
	}

	public function test_a_lost_answer_is_retried_with_the_same_key_and_urls(): void {
		$this->tender->then( 0, 'Operation timed out' )->then( 200, self::answer( 'sk_live_new', 'secret2', true ) );
		try {
			$this->connection()->connect( 'sk_live_bootstrap', self::SITE );
			$this->fail( 'a lost answer must surface' );
		} catch ( RuntimeException $error ) {
			$this->assertStringContainsString( '"Retry connect" within 15 minutes', $error->getMessage() );
			$this->assertStringNotContainsString( 'sk_live_bootstrap', $error->getMessage() );
		}
		$this->assertFalse( Tender_Settings::is_connected() );
		$this->now += 60;
		// The site's address changed meanwhile: the retry still sends what the lost connect sent.
		$this->connection()->connect( '', array( 'site_url' => 'https://moved.test' ) + self::SITE );
		$this->assertSame( array( 'sk_live_bootstrap', 'sk_live_bootstrap' ), $this->keys_used );
		$this->assertSame( $this->tender->requests[0]['body'], $this->tender->requests[1]['body'] );
		$this->assertSame( 'sk_live_new', Tender_Settings::api_key() );
		$this->assertNull( Tender_Settings::pending_connect() );
	}

	public function test_the_retry_window_ends_after_15_minutes(): void {
		$this->tender->then( 0, 'timed out' );
		try {
			$this->connection()->connect( 'sk_live_bootstrap', self::SITE );
		} catch ( RuntimeException $expected ) {
			unset( $expected );
		}
		$this->now += 15 * 60;
		$this->assertNull( Tender_Settings::pending_connect( $this->now ) );
		$this->assertArrayNotHasKey( Tender_Settings::PENDING_CONNECT, $GLOBALS['tender_test_options'] );   // the key is gone
		$this->expectExceptionMessage( 'Paste the bootstrap key' );
		$this->connection()->connect( '', self::SITE );
	}

	public function test_a_refused_key_is_not_kept_for_a_retry(): void {
		$this->tender->then( 401, array( 'error' => array( 'code' => 'invalid_api_key', 'message' => 'Invalid API key.' ) ) );
		try {
			$this->connection()->connect( 'sk_live_spent', self::SITE );
			$this->fail( 'a 401 must surface' );
		} catch ( Tender_Api_Error $error ) {
			$this->assertSame( 'invalid_api_key', $error->error_code );
		}
		$this->assertNull( Tender_Settings::pending_connect() );
	}

	public function test_reconnect_rotates_with_the_dedicated_key(): void {
		$this->tender->then( 200, self::answer( 'sk_live_one', 'secret1' ) )->then( 200, self::answer( 'sk_live_two', 'secret2', true ) );
		$this->connection()->connect( 'sk_live_bootstrap', self::SITE );
		$summary = $this->connection()->connect( '', self::SITE );
		$this->assertSame( array( 'sk_live_bootstrap', 'sk_live_one' ), $this->keys_used );
		$this->assertTrue( $summary['credentials_rotated'] );
		$this->assertSame( array( 'sk_live_two', 'secret2' ), array( Tender_Settings::api_key(), Tender_Settings::webhook_secret() ) );
	}

	public function test_a_refused_stored_key_ends_the_connection(): void {
		// A reconnect whose answer was lost spent the stored key; its retry is refused.
		$this->tender->then( 200, self::answer( 'sk_live_one', 'secret1' ) )->then( 401, array( 'error' => array( 'code' => 'invalid_api_key' ) ) );
		$this->connection()->connect( 'sk_live_bootstrap', self::SITE );
		try {
			$this->connection()->connect( '', self::SITE );
			$this->fail( 'a refused key must surface' );
		} catch ( RuntimeException $error ) {
			$this->assertStringContainsString( 'Paste a new bootstrap key', $error->getMessage() );
		}
		$this->assertFalse( Tender_Settings::is_connected() );
	}

	public function test_a_status_check_refused_ends_the_connection(): void {
		$this->tender->then( 200, self::answer( 'sk_live_one', 'secret1' ) )->then( 401, array( 'error' => array( 'code' => 'invalid_api_key' ) ) );
		$this->connection()->connect( 'sk_live_bootstrap', self::SITE );
		$this->expectExceptionMessage( 'Paste a new bootstrap key' );
		try {
			$this->connection()->refresh_status();
		} finally {
			$this->assertFalse( Tender_Settings::is_connected() );
		}
	}

	public function test_disconnect_forgets_even_when_tender_does_not_answer(): void {
		$this->tender->then( 200, self::answer( 'sk_live_one', 'secret1' ) )->then( 0, 'refused' );
		$this->connection()->connect( 'sk_live_bootstrap', self::SITE );
		$this->connection()->disconnect();
		$this->assertSame( 'POST /v1/integration/woocommerce/disconnect', $this->tender->paths()[1] );
		$this->assertSame( 'Bearer sk_live_one', $this->tender->requests[1]['headers']['Authorization'] );
		$this->assertFalse( Tender_Settings::is_connected() );
		$this->assertSame( array( Tender_Settings::GATEWAY_SETTINGS ), array_keys( $GLOBALS['tender_test_options'] ) );
	}

	public function test_keys_never_travel_in_a_url(): void {
		$this->tender->then( 200, self::answer( 'sk_live_one', 'secret1' ) )->then( 200, array( 'status' => 'ACTIVE', 'payout_configured' => true ) );
		$this->connection()->connect( 'sk_live_bootstrap', self::SITE );
		$this->connection()->refresh_status();
		foreach ( $this->tender->requests as $request ) {
			$this->assertStringNotContainsString( 'sk_live', $request['url'] );
		}
		$this->assertTrue( Tender_Settings::connection()['payout_configured'] );
	}

	public function test_keys_go_only_to_an_https_address_or_this_machine(): void {
		foreach ( array( 'https://pay.example.com', 'https://pay.example.com/tender', 'http://127.0.0.1:8000', 'http://localhost:8000', 'http://[::1]:8000' ) as $ok ) {
			$this->assertNull( Tender_Settings::address_problem( $ok ), $ok );
		}
		foreach ( array( '', 'pay.example.com', 'http://pay.example.com', 'ftp://pay.example.com', 'https://user:pw@pay.example.com', 'https://pay.example.com/?key=1', 'http://10.0.0.5' ) as $bad ) {
			$this->assertNotNull( Tender_Settings::address_problem( $bad ), $bad );
		}
	}

	public function test_both_error_shapes_are_read(): void {
		$this->assertSame( array( 'invalid_api_key', 'Invalid API key.' ), Tender_Api::describe_error( array( 'error' => array( 'code' => 'invalid_api_key', 'message' => 'Invalid API key.' ) ) ) );
		$this->assertSame( array( 'INTEGRATION_SITE_CONFLICT', 'another site' ), Tender_Api::describe_error( array( 'error' => 'another site', 'code' => 'INTEGRATION_SITE_CONFLICT' ) ) );
	}
}
