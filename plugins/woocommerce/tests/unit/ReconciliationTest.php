<?php
/**
 * Orders never stuck: the WP-Cron reconciliation and "Check payment status" re-read invoices
 * through the same rule as notifications, in bounded batches with back-off, and an order is
 * completed once whichever of them sees the payment first.
 */

use PHPUnit\Framework\TestCase;

final class ReconciliationTest extends TestCase {
	private const NOW = 1_800_000_000;

	private static function invoice( string $status, string $id = 'inv_1', string $order = '1001' ): array {
		return array( 'id' => $id, 'status' => $status, 'external_order_id' => $order, 'amount' => '25.00', 'currency' => 'USD', 'paid_amount' => 'paid' === $status ? '25.00' : null, 'transaction_hash' => '0xabc', 'metadata' => array( 'wc_order_key' => 'wc_order_abc' ) );
	}

	private static function order( int $id = 1001, string $status = 'pending', string $invoice = 'inv_1' ): Fake_Order {
		$order = new Fake_Order( $id, $status );
		$order->meta[ Tender_Order_Sync::INVOICE_META ] = $invoice;
		return $order;
	}

	private static function reconciliation( Scripted_Transport $tender, array $orders, ?Memory_Seen_Store $completions = null ): Tender_Reconciliation {
		$by_id = array();
		foreach ( $orders as $order ) {
			$by_id[ (string) $order->get_id() ] = $order;
		}
		$sync = new Tender_Order_Sync( $tender->api(), $completions ?? new Memory_Seen_Store(), static fn ( string $id ) => $by_id[ $id ] ?? null );
		return new Tender_Reconciliation( $sync, static fn ( int $limit ) => array_slice( $orders, 0, $limit ), static fn () => self::NOW );
	}

	public function test_a_paid_invoice_whose_notification_never_came_completes_its_order(): void {
		$order  = self::order();
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid' ) );
		$this->assertSame( 1, self::reconciliation( $tender, array( $order ) )->run() );
		$this->assertSame( array( 1, 'processing' ), array( $order->payment_complete_calls, $order->status ) );
		$this->assertSame( array( 'GET /v1/invoices/inv_1' ), $tender->paths() );
		$this->assertSame( 'Bearer sk_live_dedicated', $tender->requests[0]['headers']['Authorization'] );
		$this->assertStringContainsString( 'Tender: payment status check; invoice inv_1 is paid: payment complete.', $order->notes[0] );
		$this->assertSame( 'inv_1', $order->meta[ Tender_Reconciliation::DONE_META ] );   // final: never asked again
		self::reconciliation( new Scripted_Transport(), array( $order ) )->run();           // no answer scripted: no request
	}

	public function test_an_open_invoice_is_asked_again_later_and_later(): void {
		$order  = self::order();
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'awaiting_payment' ) );
		self::reconciliation( $tender, array( $order ) )->run();
		$this->assertSame( (string) ( self::NOW + 300 ), $order->meta[ Tender_Reconciliation::NEXT_META ] );
		$this->assertSame( 0, self::reconciliation( new Scripted_Transport(), array( $order ) )->run() );   // not due yet
		$this->assertSame( array( 300, 600, 1200, 2400, 21600, 21600 ), array_map( array( Tender_Reconciliation::class, 'delay' ), array( 1, 2, 3, 4, 8, 40 ) ) );
	}

	public function test_a_run_checks_at_most_one_batch(): void {
		$orders = array();
		$tender = new Scripted_Transport();
		for ( $i = 0; $i < Tender_Reconciliation::BATCH + 5; $i++ ) {
			$orders[] = self::order( 2000 + $i, 'pending', "inv_$i" );
			$tender->then( 200, self::invoice( 'awaiting_payment', "inv_$i", (string) ( 2000 + $i ) ) );
		}
		$this->assertSame( Tender_Reconciliation::BATCH, self::reconciliation( $tender, $orders )->run() );
		$this->assertCount( Tender_Reconciliation::BATCH, $tender->requests );
	}

	public function test_tender_unreachable_ends_the_run_and_backs_off(): void {
		$first  = self::order( 1001 );
		$second = self::order( 1002, 'pending', 'inv_2' );
		$tender = ( new Scripted_Transport() )->then( 0, 'connection refused' );
		self::reconciliation( $tender, array( $first, $second ) )->run();
		$this->assertCount( 1, $tender->requests );
		$this->assertSame( '1', $first->meta[ Tender_Reconciliation::TRIES_META ] );
		$this->assertSame( 'pending', $first->status );
	}

	public function test_a_notification_and_a_reconciliation_never_both_complete_an_order(): void {
		// Two requests read the same pending order at once (each its own copy, as two PHP processes
		// do), then both see the invoice paid: one claim wins, one payment_complete runs.
		$completions = new Memory_Seen_Store();
		$seen_by_webhook = self::order();
		$seen_by_cron    = self::order();
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'paid' ) )->then( 200, self::invoice( 'paid' ) );
		$webhook = new Tender_Order_Sync( $tender->api(), $completions, static fn () => $seen_by_webhook );
		$webhook->handle_event( array( 'id' => 'evt_1', 'type' => 'invoice.paid', 'data' => array( 'object' => array( 'id' => 'inv_1' ) ) ) );
		self::reconciliation( $tender, array( $seen_by_cron ), $completions )->run();
		$this->assertSame( 1, $seen_by_webhook->payment_complete_calls + $seen_by_cron->payment_complete_calls );
		$this->assertStringContainsString( 'order unchanged (pending)', end( $seen_by_cron->notes ) );
	}

	public function test_check_payment_status_of_an_order_without_an_invoice_asks_nothing(): void {
		$order = new Fake_Order();
		$sync  = new Tender_Order_Sync( ( new Scripted_Transport() )->api(), new Memory_Seen_Store(), static fn () => $order );
		$this->assertSame( '', $sync->check_order( $order ) );
	}

	public function test_a_new_invoice_is_checked_from_the_next_run(): void {
		$order = self::order();
		$order->meta[ Tender_Reconciliation::NEXT_META ] = (string) ( self::NOW + 9999 );
		$tender = ( new Scripted_Transport() )->then( 200, self::invoice( 'expired' ) )->then( 201, array_merge( self::invoice( 'pending', 'inv_2' ), array( 'checkout_url' => 'https://pay.test/c/inv_2' ) ) );
		( new Tender_Checkout( $tender->api() ) )->invoice_for( $order, 'https://shop.test/return' );
		$this->assertSame( array( 'inv_2', '0' ), array( $order->meta[ Tender_Order_Sync::INVOICE_META ], $order->meta[ Tender_Reconciliation::NEXT_META ] ) );
	}
}
