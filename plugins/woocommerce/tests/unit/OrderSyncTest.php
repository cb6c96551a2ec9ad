<?php
/**
 * The status map, and an event acting only on what the re-read invoice says.
 */

use PHPUnit\Framework\TestCase;

final class OrderSyncTest extends TestCase {
	private Memory_Seen_Store $completions;

	protected function setUp(): void {
		$this->completions = new Memory_Seen_Store();
	}

	public static function map(): array {
		return array(
			'paid completes a pending order'          => array( 'paid', 'pending', null, 'payment_complete' ),
			'paid completes an on-hold order'         => array( 'paid', 'on-hold', null, 'payment_complete' ),
			'paid after an expiry (late payment)'     => array( 'paid', 'cancelled', null, 'payment_complete' ),
			'paid again changes nothing'              => array( 'paid', 'processing', true, null ),
			'paid after completion changes nothing'   => array( 'paid', 'completed', true, null ),
			'paid after a refund changes nothing'     => array( 'paid', 'refunded', false, null ),
			'underpaid holds a pending order'         => array( 'underpaid', 'pending', null, 'on_hold' ),
			'underpaid twice changes nothing'         => array( 'underpaid', 'on-hold', null, null ),
			'underpaid never un-pays'                 => array( 'underpaid', 'processing', true, null ),
			'expired cancels an unpaid order'         => array( 'expired', 'pending', null, 'cancel' ),
			'expired cancels an on-hold order'        => array( 'expired', 'on-hold', null, 'cancel' ),
			'expired never cancels a paid order'      => array( 'expired', 'processing', true, null ),
			'cancelled never cancels a paid order'    => array( 'cancelled', 'completed', true, null ),
			'cancelled twice changes nothing'         => array( 'cancelled', 'cancelled', false, null ),
			'failed fails an unpaid order'            => array( 'failed', 'pending', null, 'fail' ),
			'failed never touches a paid order'       => array( 'failed', 'processing', true, null ),
			'refunded refunds a paid order'           => array( 'refunded', 'processing', true, 'refund' ),
			'refunded twice changes nothing'          => array( 'refunded', 'refunded', false, null ),
			'a bounced deposit leaves it payable'     => array( 'refunded', 'pending', null, 'deposit_returned' ),
			'a bounced top-up leaves it payable'      => array( 'refunded', 'on-hold', null, 'deposit_returned' ),
			'a bounce after cancel stays cancelled'   => array( 'refunded', 'cancelled', null, 'deposit_returned' ),
			'awaiting payment never moves an order'   => array( 'awaiting_payment', 'processing', true, null ),
			'a late created event never moves it'     => array( 'pending', 'pending', null, null ),
		);
	}

	/** @dataProvider map */
	public function test_status_map( string $invoice, string $order, ?bool $paid, ?string $expected ): void {
		$paid = $paid ?? in_array( $order, array( 'processing', 'completed' ), true );
		$this->assertSame( $expected, Tender_Order_Sync::decide( $invoice, $order, $paid ) );
	}

	private static function event( string $type, string $invoice_id = 'inv_1', string $id = 'evt_1' ): array {
		return array(
			'id'   => $id,
			'type' => $type,
			'data' => array( 'object' => array( 'id' => $invoice_id, 'status' => 'paid', 'external_order_id' => '1001' ) ),
		);
	}

	private static function invoice( string $status, array $more = array() ): array {
		return array_merge(
			array( 'id' => 'inv_1', 'status' => $status, 'external_order_id' => '1001', 'amount' => '25.00', 'currency' => 'USD', 'paid_amount' => null, 'transaction_hash' => '0xabc' ),
			$more
		);
	}

	private function sync( Scripted_Transport $tender, ?Fake_Order $order ): Tender_Order_Sync {
		return new Tender_Order_Sync( $tender->api(), $this->completions, static fn ( string $id ) => '1001' === $id ? $order : null );
	}

	private static function our_order( string $status = 'pending' ): Fake_Order {
		$order = new Fake_Order( 1001, $status );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		return $order;
	}

	public function test_paid_is_what_the_re_read_invoice_says_not_the_payload(): void {
		$order  = self::our_order();
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'awaiting_payment' ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.paid' ) );
		$this->assertSame( 0, $order->payment_complete_calls );
		$this->assertSame( 'pending', $order->status );
		$this->assertSame( array( 'GET /v1/invoices/inv_1' ), $tender->paths() );
		$this->assertSame( 'Bearer sk_live_dedicated', $tender->requests[0]['headers']['Authorization'] );
		$this->assertStringContainsString( 'order unchanged', end( $order->notes ) );
	}

	public function test_paid_completes_the_order_once_across_events(): void {
		$order  = self::our_order();
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid' ) )->then( 200, self::invoice( 'paid' ) )->then( 200, self::invoice( 'paid' ) );
		$sync   = $this->sync( $tender, $order );
		$sync->handle_event( self::event( 'invoice.paid', 'inv_1', 'evt_paid' ) );
		$sync->handle_event( self::event( 'invoice.settled', 'inv_1', 'evt_settled' ) );
		$sync->handle_event( self::event( 'invoice.awaiting_payment', 'inv_1', 'evt_late' ) );   // out of order
		$this->assertSame( 1, $order->payment_complete_calls );
		$this->assertSame( '0xabc', $order->transaction_id );
		$this->assertSame( 'processing', $order->status );
		$this->assertCount( 3, $order->notes );   // every event leaves a note
		$this->assertStringContainsString( 'evt_paid', $order->notes[0] );
	}

	public function test_an_invoice_never_touches_an_order_it_was_not_made_for(): void {
		// Another shop's (or an older) invoice naming our order id: the order's stored invoice differs.
		$order = self::our_order();
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_other';
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid' ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.paid' ) );
		$this->assertSame( array( 0, 'pending', array() ), array( $order->payment_complete_calls, $order->status, $order->notes ) );
	}

	public function test_an_invoice_tender_does_not_show_this_key_is_ignored(): void {
		$order  = self::our_order();
		$tender = ( new Scripted_Transport() )->then( 404, array( 'error' => array( 'code' => 'invoice_not_found' ) ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.paid' ) );
		$this->assertSame( 0, $order->payment_complete_calls );
	}

	public function test_tender_unreachable_throws_so_the_delivery_is_retried(): void {
		$tender = ( new Scripted_Transport() )->then( 0, 'connection refused' );
		$this->expectException( Tender_Api_Error::class );
		$this->sync( $tender, self::our_order() )->handle_event( self::event( 'invoice.paid' ) );
	}

	public function test_underpaid_holds_the_order_and_says_what_is_missing(): void {
		$order  = self::our_order();
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'underpaid', array( 'paid_amount' => '12.5' ) ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.underpaid' ) );
		$this->assertSame( 'on-hold', $order->status );
		$this->assertStringContainsString( 'received 12.5 of 25.00 USD; 12.50 USD is missing', end( $order->notes ) );
	}

	public function test_expiry_after_payment_changes_nothing(): void {
		$order  = self::our_order( 'processing' );
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'expired' ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.expired' ) );
		$this->assertSame( 'processing', $order->status );
	}

	public function test_a_refund_event_re_reads_its_invoice(): void {
		$order  = self::our_order( 'processing' );
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'refunded' ) );
		$event  = array( 'id' => 'evt_r', 'type' => 'refund.succeeded', 'data' => array( 'object' => array( 'id' => 'ref_1', 'invoice_id' => 'inv_1' ) ) );
		$this->sync( $tender, $order )->handle_event( $event );
		$this->assertSame( 'refunded', $order->status );
	}

	public function test_a_paid_invoice_for_an_older_total_puts_the_order_on_hold(): void {
		// The order was edited (1000.00 EUR) after its 1.00 USD invoice was made; the buyer paid that.
		$order = new Fake_Order( 1001, 'pending', '1000.00', 'EUR' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid', array( 'amount' => '1.00', 'paid_amount' => '1.00' ) ) )
			->then( 200, self::invoice( 'paid', array( 'amount' => '1.00', 'paid_amount' => '1.00' ) ) );
		$sync = $this->sync( $tender, $order );
		$sync->handle_event( self::event( 'invoice.paid', 'inv_1', 'evt_paid' ) );
		$sync->handle_event( self::event( 'invoice.settled', 'inv_1', 'evt_settled' ) );
		$this->assertSame( array( 0, 'on-hold' ), array( $order->payment_complete_calls, $order->status ) );
		$this->assertCount( 2, $order->notes );
		$this->assertStringContainsString( 'the invoice was for 1.00 USD (paid: 1.00) and the order\'s total is 1000.00 EUR', $order->notes[0] );
	}

	public function test_the_same_amount_in_another_currency_is_not_enough(): void {
		$order = new Fake_Order( 1001, 'pending', '25.00', 'EUR' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid', array( 'paid_amount' => '25.00' ) ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.paid' ) );
		$this->assertSame( array( 0, 'on-hold' ), array( $order->payment_complete_calls, $order->status ) );
	}

	public function test_a_payment_covering_the_total_completes_the_order(): void {
		$order = new Fake_Order( 1001, 'on-hold', '25', 'usd' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid', array( 'paid_amount' => '25.01' ) ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.paid' ) );
		$this->assertSame( array( 1, 'processing' ), array( $order->payment_complete_calls, $order->status ) );
	}

	public function test_a_deposit_the_provider_sent_back_leaves_the_order_payable(): void {
		$order  = self::our_order( 'on-hold' );
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'refunded' ) );
		$this->sync( $tender, $order )->handle_event( self::event( 'invoice.refunded' ) );
		$this->assertSame( 'pending', $order->status );
		$this->assertStringContainsString( 'can be paid again', end( $order->notes ) );
	}

	public function test_decimal_difference_is_exact(): void {
		$this->assertSame( '12.50', Tender_Money::difference( '25.00', '12.5' ) );
		$this->assertSame( '0.00000001', Tender_Money::difference( '0.1', '0.09999999' ) );
		$this->assertSame( '-1', Tender_Money::difference( '1', '2' ) );
	}
}
