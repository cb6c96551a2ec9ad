<?php
/**
 * The one rule for what a Tender invoice does to its WooCommerce order, whoever asks: a
 * notification, the WP-Cron reconciliation or the order screen's "Check payment status". Each
 * only says "look again": the invoice is re-read with the dedicated key and only that answer
 * counts. Orders move forward only, so answers that arrive late, out of order or twice change
 * nothing, and an order is completed at most once (a claim in the plugin's table, taken before
 * payment_complete, that only one request can win).
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

class Tender_Order_Sync {
	public const INVOICE_META = '_tender_invoice_id';
	/** Invoice ids whose stray payment (see note_stray_payment) the order's notes already tell. */
	public const STRAY_META = '_tender_stray_payments';

	/** Order statuses an unpaid order can be in (WooCommerce's own names, without "wc-"). */
	private const UNPAID = array( 'pending', 'on-hold', 'failed' );
	/** Invoice statuses after which Tender holds the buyer's money for the order. */
	private const MONEY_IN = array( 'paid', 'underpaid' );

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
	 * @param Tender_Api             $api         With the dedicated key: invoices are re-read through it.
	 * @param Tender_Seen_Store|null $completions Where "order N was completed" is claimed (the
	 *                                            plugin's table); one claim per order ever wins.
	 * @param callable|null          $find_order  order id → order object or null (wc_get_order).
	 */
	public function __construct( private Tender_Api $api, private ?Tender_Seen_Store $completions = null, ?callable $find_order = null ) {
		$this->completions = $completions ?? new Tender_Seen_Events();
		$this->find_order  = $find_order ?? static fn ( string $id ) => wc_get_order( (int) $id ) ?: null;
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
		/* translators: 1: the event's type (invoice.paid), 2: the event's id (evt_…). */
		$this->sync( $invoice_id, sprintf( __( 'Tender: %1$s (%2$s)', 'tender-for-woocommerce' ), (string) ( $event['type'] ?? 'event' ), (string) $event['id'] ) );
	}

	/**
	 * Reconciliation and "Check payment status": the order's own invoice, re-read now. Returns the
	 * invoice's status ('' when the order has none). Throws when Tender could not be asked.
	 */
	public function check_order( $order ): string {
		$invoice_id = (string) $order->get_meta( self::INVOICE_META );
		if ( '' === $invoice_id ) {
			return '';
		}
		return $this->sync( $invoice_id, __( 'Tender: payment status check', 'tender-for-woocommerce' ) );
	}

	/** Re-read one invoice and apply it to its order; the invoice's status ('' when not ours). */
	private function sync( string $invoice_id, string $cause ): string {
		try {
			$invoice = $this->api->get_invoice( $invoice_id );
		} catch ( Tender_Api_Error $error ) {
			if ( 404 === $error->status ) {
				return '';   // not this installation's invoice: nothing to do
			}
			throw $error;
		}
		$order = ( $this->find_order )( (string) ( $invoice['external_order_id'] ?? '' ) );
		if ( null === $order || ! self::made_for( $invoice, $order ) ) {
			return '';   // another shop's (or a recycled) order id: never touched
		}
		if ( self::moves_order( $invoice, $order ) ) {
			$this->apply( $order, $invoice, $cause );
		} elseif ( in_array( $invoice['status'] ?? '', self::MONEY_IN, true ) ) {
			self::note_stray_payment( $order, $invoice, $cause );
		}
		return (string) ( $invoice['status'] ?? '' );
	}

	/** The invoice was made for this order: the order's key is in its metadata, or it is the order's invoice. */
	private static function made_for( array $invoice, $order ): bool {
		$key = $invoice['metadata']['wc_order_key'] ?? null;
		return is_string( $key ) ? hash_equals( (string) $order->get_order_key(), $key ) : $order->get_meta( self::INVOICE_META ) === ( $invoice['id'] ?? null );
	}

	/**
	 * Only the order's current invoice moves it, and only while Tender is its payment method: an
	 * order the buyer paid with another gateway, or with a newer invoice, is never moved by an
	 * earlier invoice's expiry, cancellation or late payment.
	 */
	private static function moves_order( array $invoice, $order ): bool {
		$method = (string) $order->get_payment_method();
		return $order->get_meta( self::INVOICE_META ) === ( $invoice['id'] ?? null ) && ( '' === $method || 'tender' === $method );
	}

	/**
	 * Money arrived on an invoice that no longer moves its order (abandoned for another gateway or
	 * a newer invoice): said once in the order's notes, for the merchant to refund from Tender.
	 */
	private static function note_stray_payment( $order, array $invoice, string $cause ): void {
		$noted = $order->get_meta( self::STRAY_META );
		$noted = is_array( $noted ) ? $noted : array();
		if ( in_array( $invoice['id'], $noted, true ) ) {
			return;
		}
		$noted[] = $invoice['id'];
		$order->update_meta_data( self::STRAY_META, $noted );
		$order->save();
		$order->add_order_note(
			sprintf(
				/* translators: 1: what prompted the check, 2: invoice id, 3: amount paid, 4: currency, 5: the order's payment method. */
				__( '%1$s: money arrived on invoice %2$s (%3$s %4$s), which this order no longer uses (it is paid or payable with %5$s). The order is unchanged; refund that payment to the buyer from Tender.', 'tender-for-woocommerce' ),
				$cause,
				(string) $invoice['id'],
				(string) ( $invoice['paid_amount'] ?? $invoice['amount'] ?? '?' ),
				(string) ( $invoice['currency'] ?? '' ),
				'' !== (string) $order->get_payment_method() ? (string) $order->get_payment_method() : __( 'another invoice', 'tender-for-woocommerce' )
			)
		);
	}

	private function apply( $order, array $invoice, string $cause ): void {
		$status = (string) ( $invoice['status'] ?? '' );
		$action = self::decide( $status, (string) $order->get_status(), (bool) $order->is_paid() );
		/* translators: 1: what prompted the check, 2: invoice id, 3: invoice status. */
		$seen = sprintf( __( '%1$s; invoice %2$s is %3$s', 'tender-for-woocommerce' ), $cause, (string) $invoice['id'], $status );
		if ( 'payment_complete' === $action && ! self::covers_order( $invoice, $order ) ) {
			$this->hold_short_payment( $order, $invoice, $seen );
			return;
		}
		if ( 'payment_complete' === $action && ! $this->completions->claim( 'order-complete-' . $order->get_id() ) ) {
			$action = null;   // completed already by a notification or a check running beside this one
		}
		$this->act( $order, $invoice, (string) $action, $seen );
	}

	private function act( $order, array $invoice, string $action, string $seen ): void {
		switch ( $action ) {
			case 'payment_complete':
				/* translators: %s: what happened (the cause and the invoice's status). */
				$order->add_order_note( sprintf( __( '%s: payment complete.', 'tender-for-woocommerce' ), $seen ) );
				$order->payment_complete( (string) ( $invoice['transaction_hash'] ?? '' ) );
				break;
			case 'deposit_returned':
				/* translators: %s: what happened (the cause and the invoice's status). */
				$text = sprintf( __( '%s: the buyer\'s payment was sent back to them; the order is unpaid and can be paid again.', 'tender-for-woocommerce' ), $seen );
				'on-hold' === $order->get_status() ? $order->update_status( 'pending', $text ) : $order->add_order_note( $text );
				break;
			case 'on_hold':
				$order->update_status( 'on-hold', $seen . ': ' . self::underpaid_text( $invoice ) );
				break;
			case 'cancel':
				/* translators: %s: what happened (the cause and the invoice's status). */
				$order->update_status( 'cancelled', sprintf( __( '%s: order cancelled (unpaid).', 'tender-for-woocommerce' ), $seen ) );
				break;
			case 'fail':
				/* translators: %s: what happened (the cause and the invoice's status). */
				$order->update_status( 'failed', sprintf( __( '%s: the payment failed; any funds go back to the buyer\'s refund address.', 'tender-for-woocommerce' ), $seen ) );
				break;
			case 'refund':
				/* translators: %s: what happened (the cause and the invoice's status). */
				$order->update_status( 'refunded', sprintf( __( '%s: refunded in full.', 'tender-for-woocommerce' ), $seen ) );
				break;
			default:
				/* translators: 1: what happened (the cause and the invoice's status), 2: the order's status. */
				$order->add_order_note( sprintf( __( '%1$s: order unchanged (%2$s).', 'tender-for-woocommerce' ), $seen, (string) $order->get_status() ) );
		}
	}

	/** Paid, but not what the order costs now (it was edited after this invoice was made). */
	private function hold_short_payment( $order, array $invoice, string $seen ): void {
		$text = sprintf(
			/* translators: 1: what happened, 2: invoice amount, 3: invoice currency, 4: amount paid, 5: order total, 6: order currency. */
			__( '%1$s: the invoice was for %2$s %3$s (paid: %4$s) and the order\'s total is %5$s %6$s, so the order is not marked paid. Ask the buyer for the difference or refund the payment from Tender.', 'tender-for-woocommerce' ),
			$seen,
			(string) ( $invoice['amount'] ?? '?' ),
			(string) ( $invoice['currency'] ?? '?' ),
			(string) ( $invoice['paid_amount'] ?? '?' ),
			(string) $order->get_total(),
			(string) $order->get_currency()
		);
		'on-hold' === $order->get_status() ? $order->add_order_note( $text ) : $order->update_status( 'on-hold', $text );
	}

	/**
	 * Is this invoice for the order's current total, in its currency? (An administrator may edit an
	 * unpaid order after its invoice was made.)
	 */
	public static function is_for_order_total( array $invoice, $order ): bool {
		return self::same_currency( $invoice, $order )
			&& 0 === Tender_Money::compare( (string) ( $invoice['amount'] ?? '' ), Tender_Money::amount( $order->get_total(), (string) $order->get_currency() ) );
	}

	/** Does what the buyer paid on this invoice cover the order's total, in the order's currency? */
	public static function covers_order( array $invoice, $order ): bool {
		$paid = $invoice['paid_amount'] ?? null;
		$paid = is_string( $paid ) && '' !== $paid ? $paid : (string) ( $invoice['amount'] ?? '' );
		return self::same_currency( $invoice, $order )
			&& Tender_Money::compare( $paid, Tender_Money::amount( $order->get_total(), (string) $order->get_currency() ) ) >= 0;
	}

	private static function same_currency( array $invoice, $order ): bool {
		$currency = (string) ( $invoice['currency'] ?? '' );
		return '' !== $currency && strtoupper( $currency ) === strtoupper( (string) $order->get_currency() );
	}

	/** "received 12.50 of 25.00 USD; 12.50 USD is missing. …" */
	public static function underpaid_text( array $invoice ): string {
		$currency = (string) ( $invoice['currency'] ?? '' );
		$amount   = (string) ( $invoice['amount'] ?? '0' );
		$paid     = (string) ( $invoice['paid_amount'] ?? '0' );
		return sprintf(
			/* translators: 1: amount received, 2: invoice amount, 3: currency, 4: amount missing. */
			__( 'received %1$s of %2$s %3$s; %4$s %3$s is missing. The buyer can send the rest before the invoice expires; the order is on hold until then.', 'tender-for-woocommerce' ),
			$paid,
			$amount,
			$currency,
			Tender_Money::difference( $amount, $paid )
		);
	}
}
