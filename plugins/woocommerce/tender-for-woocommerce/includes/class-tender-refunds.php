<?php
/**
 * Refunds from the WooCommerce admin through Tender's refunds API. Offered only when the Tender
 * this shop is connected to answers that API (older servers do not have it).
 *
 * @package Tender
 */

defined( 'ABSPATH' ) || exit;

class Tender_Refunds {
	/** How long one answer of the refunds probe is trusted. */
	public const PROBE_SECONDS = 600;

	public function __construct( private Tender_Api $api, private $clock = null ) {
		$this->clock = $clock ?? 'time';
	}

	/**
	 * Does Tender answer the refunds API for our key? Asked once per PROBE_SECONDS and after
	 * every connect; never asked when the shop is not connected.
	 */
	public function available(): bool {
		if ( ! Tender_Settings::is_connected() ) {
			return false;
		}
		$now   = ( $this->clock )();
		$probe = get_option( Tender_Settings::REFUNDS_PROBE, null );
		if ( is_array( $probe ) && $now - (int) $probe['at'] < self::PROBE_SECONDS ) {
			return (bool) $probe['available'];
		}
		$available = $this->api->refunds_available();
		update_option(
			Tender_Settings::REFUNDS_PROBE,
			array(
				'available' => $available,
				'at'        => $now,
			),
			false
		);
		return $available;
	}

	/**
	 * The Idempotency-Key of one admin refund: the order, the amount, and what was refunded
	 * before it, so a retried click sends the same key and a later refund a new one.
	 */
	public static function idempotency_key( $order, string $amount, int $refunds_before ): string {
		return 'wc-refund-' . $order->get_id() . '-' . $order->get_order_key() . '-' . $refunds_before . '-' . $amount;
	}

	/**
	 * Ask Tender to refund `amount` of the order's invoice; returns the refund. The merchant funds
	 * it (Tender's refund says where and how much); the order note says so.
	 */
	public function refund( $order, string $amount, string $reason, int $refunds_before ): array {
		$invoice_id = (string) $order->get_meta( Tender_Order_Sync::INVOICE_META );
		if ( '' === $invoice_id ) {
			throw new RuntimeException( 'This order was not paid through Tender.' );
		}
		$body = array( 'amount' => Tender_Checkout::amount( $amount ) );
		if ( '' !== trim( $reason ) ) {
			$body['reason'] = mb_substr( trim( $reason ), 0, 500 );
		}
		$refund = $this->api->create_refund( $invoice_id, $body, self::idempotency_key( $order, $body['amount'], $refunds_before ) );
		$order->add_order_note( self::funding_note( $refund, $invoice_id ) );
		return $refund;
	}

	public static function funding_note( array $refund, string $invoice_id ): string {
		$funding = is_array( $refund['funding'] ?? null ) ? $refund['funding'] : array();
		$note    = sprintf( 'Tender: refund %s of %s %s for invoice %s is %s.', $refund['id'] ?? '?', $refund['amount'] ?? '', $refund['currency'] ?? '', $invoice_id, $refund['status'] ?? 'created' );
		if ( isset( $funding['deposit_address'] ) ) {
			$note .= sprintf( ' Fund it: send %s %s to %s', $funding['amount'] ?? '', $funding['asset'] ?? '', $funding['deposit_address'] );
			$note .= isset( $funding['deposit_memo'] ) && '' !== (string) $funding['deposit_memo'] ? sprintf( ' (memo %s)', $funding['deposit_memo'] ) : '';
			$note .= isset( $funding['expires_at'] ) ? sprintf( ' before %s.', $funding['expires_at'] ) : '.';
		}
		if ( isset( $refund['funding_url'] ) && is_string( $refund['funding_url'] ) ) {
			$note .= ' Funding page: ' . $refund['funding_url'];
		}
		return $note;
	}
}
