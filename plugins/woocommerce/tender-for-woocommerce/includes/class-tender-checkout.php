<?php
/**
 * One Tender invoice per order. A second attempt to pay the same order (the buyer came back, a
 * double click, an answer that was lost) gets the same invoice while it is for the order's
 * current total and currency; a new one is made after the order's invoice expired, failed, was
 * cancelled or its deposit was sent back to the buyer.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

/**
 * The order changed (an administrator edited it) after its invoice was made, and that invoice is
 * still open or paid at Tender, so no invoice for the new total can be made yet.
 */
class Tender_Stale_Invoice extends RuntimeException {
	public function __construct( public readonly array $invoice ) {
		parent::__construct( sprintf( 'invoice %s is for %s %s', $invoice['id'] ?? '?', $invoice['amount'] ?? '?', $invoice['currency'] ?? '?' ) ); // no-i18n: never shown (the gateway writes its own note)
	}
}

class Tender_Checkout {
	public const ATTEMPT_META  = '_tender_invoice_attempt';
	public const CHECKOUT_META = '_tender_checkout_url';
	/** Invoices that can no longer be paid: the order gets a new one. `refunded` without the
	 * order paid is a deposit the provider sent back (the order stays payable). */
	private const ENDED = array( 'expired', 'failed', 'cancelled', 'refunded' );

	public function __construct( private Tender_Api $api ) {
	}

	/**
	 * The Idempotency-Key of the order's current attempt: the same for every retry of one create,
	 * a new one only when a new invoice is wanted. Built from the order key, which is random per order.
	 */
	public static function idempotency_key( $order, int $attempt ): string {
		return 'wc-order-' . $order->get_id() . '-' . $order->get_order_key() . '-' . $attempt;
	}

	/** The body of POST /v1/invoices for an order. */
	public static function invoice_body( $order, string $return_url ): array {
		return array(
			'amount'            => Tender_Money::amount( $order->get_total(), (string) $order->get_currency() ),
			'currency'          => strtoupper( (string) $order->get_currency() ),
			'external_order_id' => (string) $order->get_id(),
			'return_url'        => $return_url,
			'metadata'          => array( 'wc_order_key' => (string) $order->get_order_key() ),
		);
	}

	/**
	 * The order's invoice (reused or created): Tender's invoice object, with checkout_url.
	 */
	public function invoice_for( $order, string $return_url ): array {
		$existing = (string) $order->get_meta( Tender_Order_Sync::INVOICE_META );
		if ( '' !== $existing ) {
			$invoice = $this->api->get_invoice( $existing );
			$ended   = in_array( $invoice['status'] ?? '', self::ENDED, true );
			if ( ! $ended && Tender_Order_Sync::is_for_order_total( $invoice, $order ) ) {
				return $invoice;   // open, or already paid, for what the order costs: the same invoice again
			}
		}
		$attempt = (int) $order->get_meta( self::ATTEMPT_META ) + ( '' === $existing ? 0 : 1 );
		$attempt = max( 1, $attempt );
		try {
			$invoice = $this->api->create_invoice( self::invoice_body( $order, $return_url ), self::idempotency_key( $order, $attempt ) );
			/* translators: 1: invoice id, 2: amount, 3: currency. */
			$note = sprintf( __( 'Tender: invoice %1$s created for %2$s %3$s.', 'tender-for-woocommerce' ), (string) $invoice['id'], (string) ( $invoice['amount'] ?? '' ), (string) ( $invoice['currency'] ?? '' ) );
		} catch ( Tender_Api_Error $error ) {
			// Tender already has an open or paid invoice for this order (made by an earlier attempt
			// whose answer we never stored, or under credentials since re-issued): use that one.
			$other = $error->body['details']['invoice_id'] ?? null;
			if ( 409 !== $error->status || 'EXTERNAL_ORDER_INTEGRATION_CONFLICT' !== $error->error_code || ! is_string( $other ) ) {
				throw $error;
			}
			$invoice = $this->api->get_invoice( $other );
			if ( ! Tender_Order_Sync::is_for_order_total( $invoice, $order ) ) {
				// Made before the order was edited: never sent to the buyer (it would pay the old total).
				throw new Tender_Stale_Invoice( $invoice );
			}
			/* translators: %s: invoice id. */
			$note = sprintf( __( 'Tender: invoice %s already existed for this order; the buyer is sent to it.', 'tender-for-woocommerce' ), (string) $invoice['id'] );
		}
		$order->update_meta_data( Tender_Order_Sync::INVOICE_META, (string) $invoice['id'] );
		$order->update_meta_data( self::ATTEMPT_META, (string) $attempt );
		if ( $invoice['id'] !== $existing ) {
			// A new invoice: the reconciliation checks it from its first run on.
			$order->update_meta_data( Tender_Reconciliation::NEXT_META, '0' );
			$order->update_meta_data( Tender_Reconciliation::TRIES_META, '0' );
		}
		$order->update_meta_data( self::CHECKOUT_META, (string) ( $invoice['checkout_url'] ?? '' ) );
		$order->save();
		$order->add_order_note( $note );
		return $invoice;
	}
}
