<?php
/**
 * WC_Order and wc_get_order: signatures as WooCommerce's; stored as a post of type shop_order with
 * meta (WooCommerce's legacy storage). Meta changes wait for save(), as WooCommerce's do.
 * Every payment_complete() call is counted (_standin_payment_complete_calls), so a test can see
 * that a plugin completed an order exactly once.
 *
 * @package TenderTests
 */

defined( 'ABSPATH' ) || exit;

class WC_Order {
	private int $id;
	private array $pending_meta = array();

	public function __construct( $order = 0 ) {
		$this->id = is_numeric( $order ) ? (int) $order : (int) $order->get_id();
	}

	private function stored( string $key, $default = '' ) {
		$value = get_post_meta( $this->id, $key, true );
		return '' === $value ? $default : $value;
	}

	public function get_id() {
		return $this->id;
	}

	public function get_total( $context = 'view' ) {
		return (string) $this->stored( '_order_total', '0.00' );
	}

	public function get_currency( $context = 'view' ) {
		return (string) $this->stored( '_order_currency', 'USD' );
	}

	public function get_order_key( $context = 'view' ) {
		return (string) $this->stored( '_order_key' );
	}

	public function get_payment_method( $context = 'view' ) {
		return (string) $this->stored( '_payment_method' );
	}

	public function get_transaction_id( $context = 'view' ) {
		return (string) $this->stored( '_transaction_id' );
	}

	public function get_status( $context = 'view' ) {
		return (string) $this->stored( '_standin_status', 'pending' );
	}

	public function has_status( $status ) {
		return is_array( $status ) ? in_array( $this->get_status(), $status, true ) : $this->get_status() === $status;
	}

	public function is_paid() {
		return $this->has_status( array( 'processing', 'completed' ) );
	}

	public function get_meta( $key = '', $single = true, $context = 'view' ) {
		return array_key_exists( $key, $this->pending_meta ) ? $this->pending_meta[ $key ] : $this->stored( $key );
	}

	public function update_meta_data( $key, $value, $meta_id = 0 ) {
		$this->pending_meta[ $key ] = $value;
	}

	public function save() {
		foreach ( $this->pending_meta as $key => $value ) {
			update_post_meta( $this->id, $key, $value );
		}
		$this->pending_meta = array();
		return $this->id;
	}

	public function get_checkout_order_received_url() {
		$url = add_query_arg(
			array(
				'order-received' => $this->id,
				'key'            => $this->get_order_key(),
			),
			home_url( '/' )
		);
		return apply_filters( 'woocommerce_get_checkout_order_received_url', $url, $this );
	}

	/**
	 * @return int Comment ID.
	 */
	public function add_order_note( $note, $is_customer_note = 0, $added_by_user = false ) {
		// One row per note (WooCommerce: one comment per note), so notes added by requests running
		// at once are all kept; a read-modify-write of one list lost one of two.
		return (int) add_post_meta( $this->id, '_standin_note', (string) $note );
	}

	public function update_status( $new_status, $note = '', $manual = false ) {
		$new_status = str_starts_with( $new_status, 'wc-' ) ? substr( $new_status, 3 ) : $new_status;
		$old_status = $this->get_status();
		$this->save();
		update_post_meta( $this->id, '_standin_status', $new_status );
		$this->add_order_note( trim( sprintf( 'Order status changed from %s to %s. %s', $old_status, $new_status, $note ) ) );
		do_action( 'woocommerce_order_status_' . $new_status, $this->id, $this );
		return true;
	}

	/**
	 * WooCommerce: completes only from the statuses of woocommerce_valid_order_statuses_for_payment_complete.
	 */
	public function payment_complete( $transaction_id = '' ) {
		update_post_meta( $this->id, '_standin_payment_complete_calls', (int) $this->stored( '_standin_payment_complete_calls', 0 ) + 1 );
		do_action( 'woocommerce_pre_payment_complete', $this->id, $transaction_id );
		$valid = apply_filters( 'woocommerce_valid_order_statuses_for_payment_complete', array( 'on-hold', 'pending', 'failed', 'cancelled' ), $this );
		if ( ! $this->has_status( $valid ) ) {
			do_action( 'woocommerce_payment_complete_order_status_' . $this->get_status(), $this->id, $transaction_id );
			return false;
		}
		if ( ! empty( $transaction_id ) ) {
			update_post_meta( $this->id, '_transaction_id', $transaction_id );
		}
		update_post_meta( $this->id, '_date_paid', time() );
		update_post_meta( $this->id, '_standin_paid_at', microtime( true ) );
		$this->update_status( apply_filters( 'woocommerce_payment_complete_order_status', 'processing', $this->id, $this ) );
		do_action( 'woocommerce_payment_complete', $this->id, $transaction_id );
		return true;
	}

	public function get_edit_order_url() {
		return apply_filters( 'woocommerce_get_edit_order_url', admin_url( 'admin.php?page=wc-orders&action=edit&id=' . $this->get_id() ), $this );
	}

	public function set_payment_method( $payment_method = '' ) {
		$this->pending_meta['_payment_method'] = is_object( $payment_method ) ? $payment_method->id : (string) $payment_method;
	}

	public function get_date_modified( $context = 'view' ) {
		return get_post_modified_time( 'U', true, $this->id );
	}

	public function get_total_refunded() {
		return (string) $this->stored( '_standin_total_refunded', '0' );
	}
}

/**
 * @param mixed $the_order Post object or post ID of the order.
 * @return bool|WC_Order
 */
function wc_get_order( $the_order = false ) {
	$id = is_object( $the_order ) ? (int) $the_order->get_id() : (int) $the_order;
	if ( $id <= 0 || 'shop_order' !== get_post_type( $id ) ) {
		return false;
	}
	return new WC_Order( $id );
}

/**
 * wc_get_orders( $args ): the query arguments the plugin passes (status, payment_method, limit,
 * orderby modified); date_created is not filtered here (the stand-in's orders are all recent).
 */
function wc_get_orders( $args ) {
	$statuses = (array) ( $args['status'] ?? array() );
	$posts    = get_posts(
		array(
			'post_type'      => 'shop_order',
			'post_status'    => 'any',
			'posts_per_page' => -1,
			'orderby'        => 'modified' === ( $args['orderby'] ?? '' ) ? 'modified' : 'ID',
			'order'          => $args['order'] ?? 'DESC',
			'fields'         => 'ids',
		)
	);
	$orders = array();
	foreach ( $posts as $id ) {
		$order = new WC_Order( (int) $id );
		if ( ( ! $statuses || $order->has_status( $statuses ) ) && ( ! isset( $args['payment_method'] ) || $order->get_payment_method() === $args['payment_method'] ) ) {
			$orders[] = $order;
		}
	}
	$limit = (int) ( $args['limit'] ?? 10 );
	return $limit < 0 ? $orders : array_slice( $orders, 0, $limit );
}

/**
 * wc_create_order( $args ): the stand-in's orders carry a total, a currency and a payment method.
 */
function wc_create_order( $args = array() ) {
	$id = wp_insert_post(
		array(
			'post_type'   => 'shop_order',
			'post_status' => 'publish',
			'post_title'  => 'Order',
		),
		true
	);
	if ( is_wp_error( $id ) ) {
		return $id;
	}
	update_post_meta( $id, '_order_key', 'wc_order_' . wp_generate_password( 13, false ) );
	update_post_meta( $id, '_order_total', (string) ( $args['total'] ?? '0.00' ) );
	update_post_meta( $id, '_order_currency', (string) ( $args['currency'] ?? get_option( 'woocommerce_currency', 'USD' ) ) );
	update_post_meta( $id, '_payment_method', (string) ( $args['payment_method'] ?? '' ) );
	update_post_meta( $id, '_standin_status', 'pending' );
	return new WC_Order( $id );
}

/**
 * wc_create_refund( $args ): with refund_payment, the gateway's process_refund runs (as
 * wc_refund_payment does); a refusal is a WP_Error and nothing is recorded.
 */
function wc_create_refund( $args = array() ) {
	$order = wc_get_order( $args['order_id'] ?? 0 );
	if ( ! $order ) {
		return new WP_Error( 'error', 'Invalid order ID.' );
	}
	if ( ! empty( $args['refund_payment'] ) ) {
		$gateways = WC()->payment_gateways()->payment_gateways();
		$gateway  = $gateways[ $order->get_payment_method() ] ?? null;
		if ( ! $gateway || ! $gateway->supports( 'refunds' ) ) {
			return new WP_Error( 'woocommerce_refund', 'The payment gateway for this order does not support automatic refunds.' );
		}
		$result = $gateway->process_refund( $order->get_id(), $args['amount'] ?? null, $args['reason'] ?? '' );
		if ( is_wp_error( $result ) ) {
			return $result;
		}
		if ( ! $result ) {
			return new WP_Error( 'woocommerce_refund', 'An error occurred while attempting to create the refund using the payment gateway API.' );
		}
	}
	$refunded = (float) $order->get_total_refunded() + (float) ( $args['amount'] ?? 0 );
	update_post_meta( $order->get_id(), '_standin_total_refunded', (string) $refunded );
	return true;
}
