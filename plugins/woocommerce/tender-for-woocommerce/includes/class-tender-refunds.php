<?php
/**
 * Refunds from the WooCommerce admin through Tender's refunds API. Offered only when the Tender
 * this shop is connected to answers that API (older servers do not have it).
 *
 * @package Tender
 */

declare(strict_types=1);

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
			throw new RuntimeException( __( 'This order was not paid through Tender.', 'tender-for-woocommerce' ) );
		}
		$body = array( 'amount' => Tender_Money::amount( $amount, (string) $order->get_currency() ) );
		if ( '' !== trim( $reason ) ) {
			$body['reason'] = mb_substr( trim( $reason ), 0, 500 );
		}
		$refund = $this->api->create_refund( $invoice_id, $body, self::idempotency_key( $order, $body['amount'], $refunds_before ) );
		$order->add_order_note( self::funding_note( $refund, $invoice_id ) );
		return $refund;
	}

	public static function funding_note( array $refund, string $invoice_id ): string {
		$funding = is_array( $refund['funding'] ?? null ) ? $refund['funding'] : array();
		/* translators: 1: refund id, 2: amount, 3: currency, 4: invoice id, 5: refund status. */
		$note = sprintf( __( 'Tender: refund %1$s of %2$s %3$s for invoice %4$s is %5$s.', 'tender-for-woocommerce' ), (string) ( $refund['id'] ?? '?' ), (string) ( $refund['amount'] ?? '' ), (string) ( $refund['currency'] ?? '' ), $invoice_id, (string) ( $refund['status'] ?? 'created' ) );
		if ( isset( $funding['deposit_address'] ) ) {
			/* translators: 1: amount, 2: asset, 3: deposit address. */
			$note .= ' ' . sprintf( __( 'Fund it: send %1$s %2$s to %3$s', 'tender-for-woocommerce' ), (string) ( $funding['amount'] ?? '' ), (string) ( $funding['asset'] ?? '' ), (string) $funding['deposit_address'] );
			/* translators: %s: the memo the deposit needs. */
			$note .= isset( $funding['deposit_memo'] ) && '' !== (string) $funding['deposit_memo'] ? ' ' . sprintf( __( '(memo %s)', 'tender-for-woocommerce' ), (string) $funding['deposit_memo'] ) : '';
			/* translators: %s: the funding deadline. */
			$note .= isset( $funding['expires_at'] ) ? ' ' . sprintf( __( 'before %s.', 'tender-for-woocommerce' ), (string) $funding['expires_at'] ) : '.';
		}
		if ( isset( $refund['funding_url'] ) && is_string( $refund['funding_url'] ) ) {
			/* translators: %s: the funding page's address. */
			$note .= ' ' . sprintf( __( 'Funding page: %s', 'tender-for-woocommerce' ), $refund['funding_url'] );
		}
		return $note;
	}
}
