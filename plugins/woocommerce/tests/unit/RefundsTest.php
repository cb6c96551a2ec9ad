<?php
/**
 * Admin refunds through Tender's refunds API, offered only when Tender answers it.
 */

use PHPUnit\Framework\TestCase;

final class RefundsTest extends TestCase {
	private int $now = 1780315200;

	protected function setUp(): void {
		$GLOBALS['tender_test_options'] = array(
			Tender_Settings::API_KEY        => 'sk_live_dedicated',
			Tender_Settings::WEBHOOK_SECRET => 's',
			Tender_Settings::INTEGRATION_ID => 'int_abc',
		);
	}

	public function test_the_probe_is_asked_once_per_ten_minutes(): void {
		$tender  = ( new Scripted_Transport() )->then( 404, array( 'error' => array( 'code' => 'route_not_found' ) ) )->then( 200, array( 'data' => array() ) );
		$refunds = new Tender_Refunds( $tender->api(), fn () => $this->now );
		$this->assertFalse( $refunds->available() );
		$this->assertFalse( $refunds->available() );
		$this->now += Tender_Refunds::PROBE_SECONDS;
		$this->assertTrue( $refunds->available() );
		$this->assertSame( array( 'GET /v1/refunds?limit=1', 'GET /v1/refunds?limit=1' ), $tender->paths() );
	}

	public function test_not_connected_never_asks(): void {
		$GLOBALS['tender_test_options'] = array();
		$tender = new Scripted_Transport();
		$this->assertFalse( ( new Tender_Refunds( $tender->api() ) )->available() );
		$this->assertSame( array(), $tender->requests );
	}

	public function test_a_refund_asks_tender_and_notes_how_to_fund_it(): void {
		$order = new Fake_Order( 1001, 'processing' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		$refund = array(
			'id' => 'ref_1', 'amount' => '5.00', 'currency' => 'USD', 'status' => 'awaiting_funds',
			'funding' => array( 'amount' => '5.02', 'asset' => 'usdc.near', 'deposit_address' => 'dep.near', 'expires_at' => '2026-11-25T20:00:00Z' ),
		);
		$tender = ( new Scripted_Transport() )->then( 201, $refund );
		( new Tender_Refunds( $tender->api() ) )->refund( $order, '5.00', 'damaged', 0 );
		$this->assertSame( array( 'POST /v1/invoices/inv_1/refunds' ), $tender->paths() );
		$this->assertSame( array( 'amount' => '5.00', 'reason' => 'damaged' ), json_decode( $tender->requests[0]['body'], true ) );
		$this->assertSame( 'wc-refund-1001-wc_order_abc-0-5.00', $tender->requests[0]['headers']['Idempotency-Key'] );
		$this->assertSame( 'Tender: refund ref_1 of 5.00 USD for invoice inv_1 is awaiting_funds. Fund it: send 5.02 usdc.near to dep.near before 2026-11-25T20:00:00Z.', $order->notes[0] );
	}

	public function test_an_order_without_a_tender_invoice_cannot_be_refunded_here(): void {
		$this->expectException( RuntimeException::class );
		( new Tender_Refunds( ( new Scripted_Transport() )->api() ) )->refund( new Fake_Order(), '5.00', '', 0 );
	}
}
