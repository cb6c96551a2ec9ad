<?php
/**
 * What a Tender event does to its WooCommerce order. The event only says "look again": the
 * invoice is re-read with the dedicated key and only that answer counts. Orders move forward
 * only, so deliveries that arrive late, out of order or twice change nothing.
 *
 * @package Tender
 */

defined( 'ABSPATH' ) || exit;

class Tender_Order_Sync {
	public const INVOICE_META = '_tender_invoice_id';

	/** Order statuses an unpaid order can be in (WooCommerce's own names, without "wc-"). */
	private const UNPAID = array( 'pending', 'on-hold', 'failed' );

	/**
	 * The status map: the invoice's current status and the order's → one action or null.
	 *
	 * paid → payment complete (once: never for an order already paid or refunded);
	 * underpaid → on hold (a pending or failed order only);
	 * expired, cancelled → cancelled, failed → failed (only while the order is unpaid);
	 * refunded → refunded for a paid order; for an unpaid one it is the buyer's deposit sent back
	 * by the provider: the order stays payable (on hold → pending);
	 * anything else (pending, quoted, awaiting_payment) → nothing.
	 *
	 * @return 'payment_complete'|'on_hold'|'cancel'|'fail'|'refund'|'deposit_returned'|null
	 */
	public static function decide( string $invoice_status, string $order_status, bool $order_is_paid ): ?string {
		$unpaid = ! $order_is_paid && in_array( $order_status, self::UNPAID, true );
		switch ( $invoice_status ) {
			case 'paid':
				return $order_is_paid || in_array( $order_status, array( 'refunded', 'completed', 'processing' ), true ) ? null : 'payment_complete';
			case 'underpaid':
				return $unpaid && 'on-hold' !== $order_status ? 'on_hold' : null;
			case 'expired':
			case 'cancelled':
				return $unpaid ? 'cancel' : null;
			case 'failed':
				return $unpaid && 'failed' !== $order_status ? 'fail' : null;
			case 'refunded':
				if ( $order_is_paid || in_array( $order_status, array( 'processing', 'completed' ), true ) ) {
					return 'refund';
				}
				return 'refunded' === $order_status ? null : 'deposit_returned';
			default:
				return null;
		}
	}

	/** @var callable(string): ?object */
	private $find_order;

	/**
	 * @param Tender_Api    $api        With the dedicated key: the invoice is re-read through it.
	 * @param callable|null $find_order order id → order object or null (wc_get_order).
	 */
	public function __construct( private Tender_Api $api, ?callable $find_order = null ) {
		$this->find_order = $find_order ?? static fn ( string $id ) => wc_get_order( (int) $id ) ?: null;
	}

	/**
	 * The receiver's action for one verified, first-seen event. Throws when Tender could not be
	 * asked (the claim is released and Tender retries).
	 */
	public function handle_event( array $event ): void {
		$object     = $event['data']['object'] ?? array();
		$invoice_id = str_starts_with( (string) ( $event['type'] ?? '' ), 'refund.' ) ? ( $object['invoice_id'] ?? '' ) : ( $object['id'] ?? '' );
		if ( ! is_string( $invoice_id ) || ! preg_match( '/^inv_[A-Za-z0-9]+$/', $invoice_id ) ) {
			return;   // not about one of our invoices
		}
		try {
			$invoice = $this->api->get_invoice( $invoice_id );
		} catch ( Tender_Api_Error $error ) {
			if ( 404 === $error->status ) {
				return;   // not this installation's invoice: nothing to do
			}
			throw $error;
		}
		$order = ( $this->find_order )( (string) ( $invoice['external_order_id'] ?? '' ) );
		// Only the order this invoice was made for (its id stored on the order at checkout).
		if ( null === $order || $order->get_meta( self::INVOICE_META ) !== $invoice['id'] ) {
			return;
		}
		$this->apply( $order, $invoice, $event );
	}

	private function apply( $order, array $invoice, array $event ): void {
		$status = (string) ( $invoice['status'] ?? '' );
		$action = self::decide( $status, (string) $order->get_status(), (bool) $order->is_paid() );
		$seen   = sprintf( 'Tender: %s (%s); invoice %s is %s', $event['type'] ?? 'event', $event['id'], $invoice['id'], $status );
		if ( 'payment_complete' === $action && ! self::covers_order( $invoice, $order ) ) {
			// Paid, but not what the order costs now (it was edited after this invoice was made).
			$text = sprintf( '%s: the invoice was for %s %s (paid: %s) and the order\'s total is %s %s, so the order is not marked paid. Ask the buyer for the difference or refund the payment from Tender.', $seen, $invoice['amount'] ?? '?', $invoice['currency'] ?? '?', $invoice['paid_amount'] ?? '?', $order->get_total(), $order->get_currency() );
			'on-hold' === $order->get_status() ? $order->add_order_note( $text ) : $order->update_status( 'on-hold', $text );
			return;
		}
		switch ( $action ) {
			case 'payment_complete':
				$order->add_order_note( "$seen: payment complete." );
				$order->payment_complete( (string) ( $invoice['transaction_hash'] ?? '' ) );
				break;
			case 'deposit_returned':
				$text = "$seen: the buyer's payment was sent back to them; the order is unpaid and can be paid again.";
				'on-hold' === $order->get_status() ? $order->update_status( 'pending', $text ) : $order->add_order_note( $text );
				break;
			case 'on_hold':
				$order->update_status( 'on-hold', "$seen: " . self::underpaid_text( $invoice ) );
				break;
			case 'cancel':
				$order->update_status( 'cancelled', "$seen: order cancelled (unpaid)." );
				break;
			case 'fail':
				$order->update_status( 'failed', "$seen: the payment failed; any funds go back to the buyer's refund address." );
				break;
			case 'refund':
				$order->update_status( 'refunded', "$seen: refunded in full." );
				break;
			default:
				$order->add_order_note( "$seen: order unchanged ({$order->get_status()})." );
		}
	}

	/**
	 * Is this invoice for the order's current total, in its currency? (An administrator may edit an
	 * unpaid order after its invoice was made.)
	 */
	public static function is_for_order_total( array $invoice, $order ): bool {
		return self::same_currency( $invoice, $order )
			&& 0 === self::compare( (string) ( $invoice['amount'] ?? '' ), Tender_Checkout::amount( $order->get_total() ) );
	}

	/** Does what the buyer paid on this invoice cover the order's total, in the order's currency? */
	public static function covers_order( array $invoice, $order ): bool {
		$paid = $invoice['paid_amount'] ?? null;
		$paid = is_string( $paid ) && '' !== $paid ? $paid : (string) ( $invoice['amount'] ?? '' );
		return self::same_currency( $invoice, $order ) && self::compare( $paid, Tender_Checkout::amount( $order->get_total() ) ) >= 0;
	}

	private static function same_currency( array $invoice, $order ): bool {
		$currency = (string) ( $invoice['currency'] ?? '' );
		return '' !== $currency && strtoupper( $currency ) === strtoupper( (string) $order->get_currency() );
	}

	/** -1, 0 or 1 for decimal strings a and b; anything not a decimal compares as less (-1). */
	public static function compare( string $a, string $b ): int {
		try {
			$difference = self::decimal_difference( $a, $b );
		} catch ( InvalidArgumentException $not_a_number ) {
			return -1;
		}
		return str_starts_with( $difference, '-' ) ? -1 : ( '' === trim( $difference, '0.' ) ? 0 : 1 );
	}

	/** "Received 12.50 of 25.00 USD; 12.50 USD is missing. …" */
	public static function underpaid_text( array $invoice ): string {
		$currency = (string) ( $invoice['currency'] ?? '' );
		$amount   = (string) ( $invoice['amount'] ?? '0' );
		$paid     = (string) ( $invoice['paid_amount'] ?? '0' );
		$missing  = self::decimal_difference( $amount, $paid );
		return "received $paid of $amount $currency; $missing $currency is missing. The buyer can send the rest before the invoice expires; the order is on hold until then.";
	}

	/** a - b for decimal strings, exactly (no floats for money). */
	public static function decimal_difference( string $a, string $b ): string {
		$scale = max( self::scale_of( $a ), self::scale_of( $b ) );
		$units = self::to_units( $a, $scale ) - self::to_units( $b, $scale );
		$sign  = $units < 0 ? '-' : '';
		$digits = str_pad( (string) abs( $units ), $scale + 1, '0', STR_PAD_LEFT );
		return $sign . ( 0 === $scale ? $digits : substr( $digits, 0, -$scale ) . '.' . substr( $digits, -$scale ) );
	}

	private static function scale_of( string $decimal ): int {
		$dot = strpos( $decimal, '.' );
		return false === $dot ? 0 : strlen( $decimal ) - $dot - 1;
	}

	private static function to_units( string $decimal, int $scale ): int {
		if ( ! preg_match( '/^(-?)(\d+)(?:\.(\d+))?$/', trim( $decimal ), $parts ) ) {
			throw new InvalidArgumentException( "not a decimal amount: $decimal" );
		}
		$units = (int) ( $parts[2] . str_pad( $parts[3] ?? '', $scale, '0' ) );
		return '-' === $parts[1] ? -$units : $units;
	}
}
