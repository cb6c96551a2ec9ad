<?php
/**
 * A buyer who switches gateway (or pays a newer Tender invoice): the earlier invoice's expiry,
 * cancellation or late payment never moves the order; money arriving on it leaves one note.
 */

use PHPUnit\Framework\TestCase;

final class GatewaySwitchTest extends TestCase {
	private static function invoice( string $status, string $id = 'inv_1' ): array {
		return array( 'id' => $id, 'status' => $status, 'external_order_id' => '1001', 'amount' => '25.00', 'currency' => 'USD', 'paid_amount' => '25.00', 'transaction_hash' => '0xabc', 'metadata' => array( 'wc_order_key' => 'wc_order_abc' ) );
	}

	private static function event( string $type, string $id = 'inv_1', string $event = 'evt_1' ): array {
		return array( 'id' => $event, 'type' => $type, 'data' => array( 'object' => array( 'id' => $id ) ) );
	}

	private static function sync( Scripted_Transport $tender, Fake_Order $order ): Tender_Order_Sync {
		return new Tender_Order_Sync( $tender->api(), new Memory_Seen_Store(), static fn ( string $id ) => '1001' === $id ? $order : null );
	}

	/** The buyer started with Tender (inv_1), then paid with another gateway. */
	private static function switched( string $status, string $method = 'bacs' ): Fake_Order {
		$order = new Fake_Order( 1001, $status, '25.00', 'USD', 'wc_order_abc', $method );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_1';
		return $order;
	}

	public static function endings(): array {
		return array(
			'expired, order awaiting a bank transfer' => array( 'expired', 'on-hold' ),
			'cancelled, order awaiting a bank transfer' => array( 'cancelled', 'on-hold' ),
			'expired, order paid by card'             => array( 'expired', 'processing' ),
			'failed, order pending with cheque'       => array( 'failed', 'pending' ),
			'refunded, order pending with cheque'     => array( 'refunded', 'pending' ),
		);
	}

	/** @dataProvider endings */
	public function test_an_abandoned_invoice_ending_never_moves_an_order_paid_otherwise( string $invoice, string $order_status ): void {
		$order  = self::switched( $order_status );
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( $invoice ) );
		self::sync( $tender, $order )->handle_event( self::event( "invoice.$invoice" ) );
		$this->assertSame( array( $order_status, 0, array() ), array( $order->status, $order->payment_complete_calls, $order->notes ) );
	}

	public function test_a_late_payment_to_an_abandoned_invoice_leaves_one_note(): void {
		$order  = self::switched( 'processing' );
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid' ) )->then( 200, self::invoice( 'paid' ) );
		$sync   = self::sync( $tender, $order );
		$sync->handle_event( self::event( 'invoice.paid', 'inv_1', 'evt_paid' ) );
		$sync->handle_event( self::event( 'invoice.settled', 'inv_1', 'evt_settled' ) );
		$this->assertSame( array( 'processing', 0 ), array( $order->status, $order->payment_complete_calls ) );
		$this->assertCount( 1, $order->notes );
		$this->assertStringContainsString( 'money arrived on invoice inv_1 (25.00 USD), which this order no longer uses (it is paid or payable with bacs)', $order->notes[0] );
		$this->assertStringContainsString( 'refund that payment to the buyer from Tender', $order->notes[0] );
	}

	public function test_a_late_payment_to_an_earlier_tender_invoice_of_an_order_paid_by_a_newer_one(): void {
		$order = new Fake_Order( 1001, 'processing' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_2';   // the newer invoice paid the order
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'expired' ) )->then( 200, self::invoice( 'paid' ) );
		$sync   = self::sync( $tender, $order );
		$sync->handle_event( self::event( 'invoice.expired' ) );
		$this->assertSame( array(), $order->notes );
		$sync->handle_event( self::event( 'invoice.paid', 'inv_1', 'evt_2' ) );
		$this->assertSame( array( 'processing', 0 ), array( $order->status, $order->payment_complete_calls ) );
		$this->assertStringContainsString( 'money arrived on invoice inv_1', $order->notes[0] );
	}

	public function test_an_invoice_naming_our_order_id_but_another_order_key_is_ignored(): void {
		$order = new Fake_Order( 1001, 'pending', '25.00', 'USD', 'wc_order_other' );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = 'inv_9';
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid' ) );
		self::sync( $tender, $order )->handle_event( self::event( 'invoice.paid' ) );
		$this->assertSame( array( 'pending', array() ), array( $order->status, $order->notes ) );
	}

	public function test_the_current_invoice_still_moves_an_order_that_came_back_to_tender(): void {
		$order  = self::switched( 'pending', 'tender' );
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid' ) );
		self::sync( $tender, $order )->handle_event( self::event( 'invoice.paid' ) );
		$this->assertSame( array( 'processing', 1 ), array( $order->status, $order->payment_complete_calls ) );
	}
}
