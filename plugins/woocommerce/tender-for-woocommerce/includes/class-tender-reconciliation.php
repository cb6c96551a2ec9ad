<?php
/**
 * Orders never stuck when notifications do not arrive (a firewall, a security plugin or basic
 * authentication in front of the shop): every few minutes WP-Cron re-reads, with the dedicated
 * key, the invoices of orders still pending or on hold for Tender, and applies them through the
 * same rule as a notification (Tender_Order_Sync). A bounded batch per run; each order backs off
 * (5 min, 10, 20, … at most 6 h between checks) and is left alone once its invoice is final.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

class Tender_Reconciliation {
	public const HOOK          = 'tender_reconcile_orders';
	public const SCHEDULE      = 'tender_every_five_minutes';
	public const BATCH         = 20;
	public const FIRST_DELAY   = 300;
	public const LONGEST_DELAY = 6 * 3600;
	/** Orders older than this are not looked at any more (their invoices expired long ago). */
	public const MAX_AGE_SECONDS = 30 * 86400;
	public const NEXT_META     = '_tender_next_check_at';
	public const TRIES_META    = '_tender_checks';
	public const DONE_META     = '_tender_check_done';
	/** After one of these Tender will not move the invoice again by itself. */
	private const FINAL = array( 'paid', 'expired', 'cancelled', 'failed', 'refunded' );

	/** @var callable(int): array */
	private $candidates;

	/**
	 * @param callable|null $candidates limit → orders pending or on hold for Tender, least recently
	 *                                  changed first (wc_get_orders).
	 * @param callable|null $clock      () → unix seconds.
	 */
	public function __construct( private Tender_Order_Sync $sync, ?callable $candidates = null, private $clock = null ) {
		$this->candidates = $candidates ?? array( self::class, 'unpaid_tender_orders' );
		$this->clock      = $clock ?? 'time';
	}

	/** The WP-Cron hook: one run with the stored credentials (nothing to do when not connected). */
	public static function run_now(): void {
		if ( ! Tender_Settings::is_connected() ) {
			return;
		}
		$api = new Tender_Api( Tender_Settings::api_base_url(), Tender_Settings::api_key() );
		( new self( new Tender_Order_Sync( $api ) ) )->run();
		update_option( Tender_Settings::RECONCILED, time(), false );
	}

	/** WooCommerce's order query (HPOS or posts alike). */
	public static function unpaid_tender_orders( int $limit ): array {
		return wc_get_orders(
			array(
				'status'         => array( 'pending', 'on-hold' ),
				'payment_method' => 'tender',
				'date_created'   => '>' . ( time() - self::MAX_AGE_SECONDS ),
				'orderby'        => 'modified',
				'order'          => 'ASC',
				'limit'          => $limit,
			)
		);
	}

	/**
	 * Check the orders that are due, at most BATCH of them. Returns how many were checked. Stops at
	 * the first answer Tender did not give (it is down: the next run tries again).
	 */
	public function run(): int {
		$now     = ( $this->clock )();
		$checked = 0;
		foreach ( ( $this->candidates )( self::BATCH * 5 ) as $order ) {
			if ( $checked >= self::BATCH ) {
				break;
			}
			if ( ! $this->due( $order, $now ) ) {
				continue;
			}
			++$checked;
			try {
				$status = $this->sync->check_order( $order );
			} catch ( Tender_Api_Error $error ) {
				$this->back_off( $order, $now );
				break;
			}
			$this->after_check( $order, $status, $now );
		}
		return $checked;
	}

	private function due( $order, int $now ): bool {
		$invoice = (string) $order->get_meta( Tender_Order_Sync::INVOICE_META );
		return '' !== $invoice
			&& $order->get_meta( self::DONE_META ) !== $invoice
			&& (int) $order->get_meta( self::NEXT_META ) <= $now;
	}

	private function after_check( $order, string $status, int $now ): void {
		if ( '' === $status || in_array( $status, self::FINAL, true ) ) {
			// Final (or not ours): the order has what it will get from this invoice.
			$order->update_meta_data( self::DONE_META, (string) $order->get_meta( Tender_Order_Sync::INVOICE_META ) );
			$order->save();
			return;
		}
		$this->back_off( $order, $now );
	}

	private function back_off( $order, int $now ): void {
		$tries = (int) $order->get_meta( self::TRIES_META ) + 1;
		$order->update_meta_data( self::TRIES_META, (string) $tries );
		$order->update_meta_data( self::NEXT_META, (string) ( $now + self::delay( $tries ) ) );
		$order->save();
	}

	/** Seconds before the next check of an order checked `tries` times: 5 min, doubling, at most 6 h. */
	public static function delay( int $tries ): int {
		return (int) min( self::LONGEST_DELAY, self::FIRST_DELAY * ( 2 ** max( 0, min( $tries - 1, 16 ) ) ) );
	}

	/** cron_schedules: the reconciliation's five-minute interval. */
	public static function add_schedule( $schedules ): array {
		$schedules                   = is_array( $schedules ) ? $schedules : array();
		$schedules[ self::SCHEDULE ] = array(
			'interval' => 300,
			'display'  => __( 'Every five minutes (Tender payment checks)', 'tender-for-woocommerce' ),
		);
		return $schedules;
	}
}
