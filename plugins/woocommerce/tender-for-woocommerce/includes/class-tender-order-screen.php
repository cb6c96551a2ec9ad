<?php
/**
 * The order screen's "Check payment status" button: re-reads the order's invoice now, through the
 * same rule as notifications and the reconciliation. A link to admin-post.php with a nonce for
 * that order, handled only for a user who may edit orders.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

final class Tender_Order_Screen {
	public const ACTION = 'tender_check_payment';

	public static function nonce_action( int $order_id ): string {
		return self::ACTION . '_' . $order_id;
	}

	/** woocommerce_order_actions_end (the order screen's "Order actions" box, posts and HPOS alike). */
	public static function button( $order_id ): void {
		$order = wc_get_order( $order_id );
		if ( ! $order || '' === (string) $order->get_meta( Tender_Order_Sync::INVOICE_META ) || ! current_user_can( 'edit_shop_orders' ) ) {
			return;
		}
		$url = wp_nonce_url( add_query_arg( array( 'action' => self::ACTION, 'order_id' => (int) $order_id ), admin_url( 'admin-post.php' ) ), self::nonce_action( (int) $order_id ) ); // phpcs:ignore WordPress.Arrays.ArrayDeclarationSpacing
		printf(
			'<li class="wide"><a class="button" id="tender-check-payment" href="%1$s">%2$s</a></li>',
			esc_url( $url ),
			esc_html__( 'Check payment status', 'tender-for-woocommerce' )
		);
	}

	/** admin_post_tender_check_payment: check, leave the answer in the order's notes, go back. */
	public static function handle(): void {
		$order_id = absint( $_GET['order_id'] ?? 0 ); // phpcs:ignore WordPress.Security.NonceVerification -- verified on the next line
		check_admin_referer( self::nonce_action( $order_id ) );
		if ( ! current_user_can( 'edit_shop_orders' ) ) {
			wp_die( esc_html__( 'You are not allowed to check this order\'s payment.', 'tender-for-woocommerce' ), '', array( 'response' => 403 ) );
		}
		$order = wc_get_order( $order_id );
		if ( ! $order ) {
			wp_die( esc_html__( 'No such order.', 'tender-for-woocommerce' ), '', array( 'response' => 404 ) );
		}
		try {
			( new Tender_Order_Sync( Tender_Gateway::api() ) )->check_order( $order );
		} catch ( Tender_Api_Error $error ) {
			/* translators: %s: what went wrong. */
			$order->add_order_note( sprintf( __( 'Tender: the payment status could not be checked: %s', 'tender-for-woocommerce' ), $error->getMessage() ) );
		}
		wp_safe_redirect( $order->get_edit_order_url() );
		exit;
	}
}
