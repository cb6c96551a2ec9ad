<?php
/**
 * One invoice per order: the body, the Idempotency-Key, and reuse on a second attempt.
 */

use PHPUnit\Framework\TestCase;

final class CheckoutTest extends TestCase {
	private const RETURN_URL = 'https://shop.test/checkout/order-received/1001/?key=wc_order_abc';

	private static function invoice( string $id, string $status = 'awaiting_payment' ): array {
		return array( 'id' => $id, 'status' => $status, 'amount' => '25.00', 'currency' => 'USD', 'checkout_url' => "https://pay.test/checkout/$id" );
	}

	public function test_the_first_attempt_creates_the_invoice_from_the_order(): void {
		$order  = new Fake_Order( 1001, 'pending', '25.00', 'eur' );
		$tender = ( new Scripted_Transport() )->then( 201, self::invoice( 'inv_1' ) );
		$invoice = ( new Tender_Checkout( $tender->api() ) )->invoice_for( $order, self::RETURN_URL );
		$this->assertSame( 'https://pay.test/checkout/inv_1', $invoice['checkout_url'] );
		$this->assertSame( array( 'POST /v1/invoices' ), $tender->paths() );
		$this->assertSame(
			array( 'amount' => '25.00', 'currency' => 'EUR', 'external_order_id' => '1001', 'return_url' => self::RETURN_URL, 'metadata' => array( 'wc_order_key' => 'wc_order_abc' ) ),
			json_decode( $tender->requests[0]['body'], true )
		);
		$this->assertSame( 'wc-order-1001-wc_order_abc-1', $tender->requests[0]['headers']['Idempotency-Key'] );
		$this->assertSame( 'inv_1', $order->meta[ Tender_Order_Sync::INVOICE_META ] );
		$this->assertSame( 1, $order->saves );
	}

	public function test_a_second_attempt_reuses_the_open_invoice(): void {
		$order = new Fake_Order();
		$tender = ( new Scripted_Transport() )->then( 201, self::invoice( 'inv_1' ) )->then( 200, self::invoice( 'inv_1', 'quoted' ) );
		$checkout = new Tender_Checkout( $tender->api() );
		$checkout->invoice_for( $order, self::RETURN_URL );
		$again = $checkout->invoice_for( $order, self::RETURN_URL );
		$this->assertSame( 'inv_1', $again['id'] );
		$this->assertSame( array( 'POST /v1/invoices', 'GET /v1/invoices/inv_1' ), $tender->paths() );
	}

	public function test_a_lost_answer_is_retried_with_the_same_key(): void {
		$order  = new Fake_Order();
		$tender = ( new Scripted_Transport() )->then( 0, 'timed out' )->then( 201, self::invoice( 'inv_1' ) );
		$checkout = new Tender_Checkout( $tender->api() );
		try {
			$checkout->invoice_for( $order, self::RETURN_URL );
			$this->fail( 'a timeout must surface' );
		} catch ( Tender_Api_Error $error ) {
			$this->assertTrue( $error->answer_lost() );
		}
		$checkout->invoice_for( $order, self::RETURN_URL );
		$keys = array_map( static fn ( $r ) => $r['headers']['Idempotency-Key'], $tender->requests );
		$this->assertSame( array( 'wc-order-1001-wc_order_abc-1', 'wc-order-1001-wc_order_abc-1' ), $keys );
	}

	public function test_after_expiry_a_new_invoice_with_a_new_key(): void {
		$order  = new Fake_Order();
		$tender = ( new Scripted_Transport() )->then( 201, self::invoice( 'inv_1' ) )->then( 200, self::invoice( 'inv_1', 'expired' ) )->then( 201, self::invoice( 'inv_2' ) );
		$checkout = new Tender_Checkout( $tender->api() );
		$checkout->invoice_for( $order, self::RETURN_URL );
		$this->assertSame( 'inv_2', $checkout->invoice_for( $order, self::RETURN_URL )['id'] );
		$this->assertSame( 'wc-order-1001-wc_order_abc-2', $tender->requests[2]['headers']['Idempotency-Key'] );
		$this->assertSame( 'inv_2', $order->meta[ Tender_Order_Sync::INVOICE_META ] );
	}

	public function test_an_open_invoice_for_an_older_total_is_never_reused(): void {
		// An administrator edited the unpaid order (now 1000.00 EUR) after its 1.00 USD invoice was
		// made; Tender keeps one open invoice per order, so it names the old one: the buyer is refused.
		$order = new Fake_Order( 1001, 'pending', '1000.00', 'EUR' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		$old      = array_merge( self::invoice( 'inv_1' ), array( 'amount' => '1.00' ) );
		$conflict = array( 'error' => 'open', 'code' => 'EXTERNAL_ORDER_INTEGRATION_CONFLICT', 'details' => array( 'invoice_id' => 'inv_1' ) );
		$tender   = ( new Scripted_Transport() )->then( 200, $old )->then( 409, $conflict )->then( 200, $old );
		try {
			( new Tender_Checkout( $tender->api() ) )->invoice_for( $order, self::RETURN_URL );
			$this->fail( 'a stale invoice must not be handed out' );
		} catch ( Tender_Stale_Invoice $stale ) {
			$this->assertSame( 'inv_1', $stale->invoice['id'] );
		}
		$this->assertSame( array( 'GET /v1/invoices/inv_1', 'POST /v1/invoices', 'GET /v1/invoices/inv_1' ), $tender->paths() );
		$this->assertSame( array( 'amount' => '1000.00', 'currency' => 'EUR' ), array_slice( json_decode( $tender->requests[1]['body'], true ), 0, 2 ) );
	}

	public function test_an_open_invoice_in_another_currency_is_never_reused(): void {
		$order = new Fake_Order( 1001, 'pending', '25.00', 'EUR' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'inv_1' ) )->then( 201, array_merge( self::invoice( 'inv_2' ), array( 'currency' => 'EUR' ) ) );
		$this->assertSame( 'inv_2', ( new Tender_Checkout( $tender->api() ) )->invoice_for( $order, self::RETURN_URL )['id'] );
	}

	public function test_after_the_deposit_was_sent_back_a_fresh_invoice(): void {
		$order = new Fake_Order();
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'inv_1', 'refunded' ) )->then( 201, self::invoice( 'inv_2' ) );
		$this->assertSame( 'inv_2', ( new Tender_Checkout( $tender->api() ) )->invoice_for( $order, self::RETURN_URL )['id'] );
		$this->assertSame( 'inv_2', $order->meta[ Tender_Order_Sync::INVOICE_META ] );
	}

	public function test_tender_already_has_an_invoice_for_the_order(): void {
		// Created under credentials since re-issued (the Idempotency-Key is per key): Tender names it.
		$order  = new Fake_Order();
		$conflict = array( 'error' => 'an invoice for this order is open', 'code' => 'EXTERNAL_ORDER_INTEGRATION_CONFLICT', 'details' => array( 'invoice_id' => 'inv_9' ) );
		$tender = ( new Scripted_Transport() )->then( 409, $conflict )->then( 200, self::invoice( 'inv_9' ) );
		$this->assertSame( 'inv_9', ( new Tender_Checkout( $tender->api() ) )->invoice_for( $order, self::RETURN_URL )['id'] );
		$this->assertSame( 'inv_9', $order->meta[ Tender_Order_Sync::INVOICE_META ] );
	}

	public function test_no_payout_wallet_is_an_error_the_gateway_can_name(): void {
		$tender = ( new Scripted_Transport() )->then( 400, array( 'error' => 'no payout wallet', 'code' => 'payout_wallet_not_configured' ) );
		try {
			( new Tender_Checkout( $tender->api() ) )->invoice_for( new Fake_Order(), self::RETURN_URL );
			$this->fail( 'expected a refusal' );
		} catch ( Tender_Api_Error $error ) {
			$this->assertSame( array( 400, 'payout_wallet_not_configured', false ), array( $error->status, $error->error_code, $error->answer_lost() ) );
		}
	}

	public function test_amounts_have_their_currencys_decimals(): void {
		// A yen shop with two price decimals sends "1500"; Tender refuses "1500.00" yen.
		$this->assertSame( array( '1500', '1.250', '25.50' ), array( Tender_Money::amount( '1500.00', 'JPY' ), Tender_Money::amount( '1.25', 'kwd' ), Tender_Money::amount( '25.5', 'EUR' ) ) );
		$tender = ( new Scripted_Transport() )->then( 201, array_merge( self::invoice( 'inv_1' ), array( 'amount' => '1500', 'currency' => 'JPY' ) ) );
		( new Tender_Checkout( $tender->api() ) )->invoice_for( new Fake_Order( 1001, 'pending', '1500.00', 'JPY' ), self::RETURN_URL );
		$this->assertSame( '1500', json_decode( $tender->requests[0]['body'], true )['amount'] );
		$this->expectException( InvalidArgumentException::class );
		Tender_Money::amount( '1500.50', 'JPY' );   // not sendable without changing what is owed
	}

	public function test_amounts_are_decimal_strings(): void {
		$this->assertSame( '25.00', Tender_Money::amount( '25.00', 'USD' ) );
		$this->assertSame( '0.10', Tender_Money::amount( 0.1, 'USD' ) );
		$this->expectException( InvalidArgumentException::class );
		Tender_Money::amount( '1e3', 'USD' );
	}
}
