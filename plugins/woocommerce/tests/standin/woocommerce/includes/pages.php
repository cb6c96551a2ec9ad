<?php
/**
 * The screens and routes WooCommerce would provide, as small as the plugin's tests need:
 * the gateway settings screen (WooCommerce > Settings > Payments > section), an order screen with
 * the refund button, the classic checkout form, the Store API checkout route (Checkout Blocks),
 * and the order-received page.
 *
 * @package TenderTests
 */

defined( 'ABSPATH' ) || exit;

add_action(
	'init',
	static function () {
		register_post_type( 'shop_order', array( 'public' => false ) );
	}
);

add_action(
	'admin_menu',
	static function () {
		add_menu_page( 'WooCommerce', 'WooCommerce', 'manage_options', 'wc-settings', 'wc_standin_settings_screen' );
		add_submenu_page( 'wc-settings', 'Orders', 'Orders', 'manage_options', 'wc-orders', 'wc_standin_order_screen' );
	}
);

/** WC_Settings_Payment_Gateways::save + output for ?page=wc-settings&tab=checkout&section=<gateway id>. */
function wc_standin_settings_screen() {
	$section  = sanitize_key( wp_unslash( $_GET['section'] ?? '' ) ); // phpcs:ignore
	$gateways = WC()->payment_gateways()->payment_gateways();
	if ( ! isset( $gateways[ $section ] ) ) {
		echo '<div class="wrap"><h1>Payments</h1><ul>';
		foreach ( $gateways as $id => $gateway ) {
			printf( '<li><a href="%s">%s</a></li>', esc_url( admin_url( 'admin.php?page=wc-settings&tab=checkout&section=' . $id ) ), esc_html( $gateway->get_method_title() ) );
		}
		echo '</ul></div>';
		return;
	}
	// WC_Admin_Menus::save_settings: only a form that says "save" (or a section's filter) is saved.
	if ( 'POST' === $_SERVER['REQUEST_METHOD'] && apply_filters( "woocommerce_save_settings_checkout_{$section}", ! empty( $_POST['save'] ) ) ) {
		check_admin_referer( 'woocommerce-settings' );
		do_action( 'woocommerce_update_options_payment_gateways_' . $section );
	}
	echo '<div class="wrap woocommerce"><form method="post" id="mainform">';
	$gateways[ $section ]->admin_options();
	wp_nonce_field( 'woocommerce-settings' );
	echo '<p class="submit"><button name="save" id="save" class="button-primary" type="submit" value="Save changes">Save changes</button></p></form></div>';
}

/** The order screen: status, notes and (where the gateway can refund it) the refund form. */
function wc_standin_order_screen() {
	$order = wc_get_order( absint( $_GET['id'] ?? 0 ) ); // phpcs:ignore
	if ( ! $order ) {
		echo '<div class="wrap"><h1>No such order</h1></div>';
		return;
	}
	printf( '<div class="wrap"><h1>Order #%d</h1><p>Status: <span id="order-status">%s</span></p><ol id="order-notes">', (int) $order->get_id(), esc_html( $order->get_status() ) );
	foreach ( get_post_meta( $order->get_id(), '_standin_note', false ) as $note ) {
		printf( '<li>%s</li>', esc_html( $note ) );
	}
	echo '</ol><ul id="order-actions">';
	do_action( 'woocommerce_order_actions_end', $order->get_id() );   // WC_Meta_Box_Order_Actions::output
	echo '</ul>';
	$gateway = WC()->payment_gateways()->payment_gateways()[ $order->get_payment_method() ] ?? null;
	if ( $gateway && $gateway->can_refund_order( $order ) ) {
		printf(
			'<form method="post" action="%s" id="refund-form"><input type="hidden" name="action" value="woocommerce_refund_line_items"><input type="hidden" name="order_id" value="%d"><input type="hidden" name="api_refund" value="true"><input type="hidden" name="security" value="%s"><label>Amount <input name="refund_amount" id="refund_amount"></label> <label>Reason <input name="refund_reason" id="refund_reason"></label> <button type="submit" class="button do-api-refund" id="do-api-refund">Refund via %s</button></form>',
			esc_url( admin_url( 'admin-ajax.php' ) ),
			(int) $order->get_id(),
			esc_attr( wp_create_nonce( 'order-item' ) ),
			esc_html( $gateway->get_method_title() )
		);
	}
	echo '</div>';
}

/** WC_AJAX::refund_line_items (the refund button). */
add_action(
	'wp_ajax_woocommerce_refund_line_items',
	static function () {
		check_ajax_referer( 'order-item', 'security' );
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( -1 );
		}
		$result = wc_create_refund(
			array(
				'amount'         => wc_standin_decimal( wp_unslash( $_POST['refund_amount'] ?? '' ) ),
				'reason'         => sanitize_text_field( wp_unslash( $_POST['refund_reason'] ?? '' ) ),
				'order_id'       => absint( $_POST['order_id'] ?? 0 ),
				'refund_payment' => 'true' === ( $_POST['api_refund'] ?? '' ),
			)
		);
		if ( is_wp_error( $result ) ) {
			wp_send_json_error( array( 'error' => $result->get_error_message() ) );
		}
		wp_send_json_success( array( 'status' => 'fully_refunded' === $result ? $result : 'refunded' ) );
	}
);

function wc_standin_decimal( $value ) {
	return preg_match( '/^\d+(\.\d+)?$/', (string) $value ) ? (string) $value : '0';
}

/**
 * WC_Checkout::process_order_payment for one order: the gateway's process_payment; on success
 * the redirect, on failure the notices.
 */
function wc_standin_pay_order( string $payment_method, string $total ): array {
	$gateways = WC()->payment_gateways()->get_available_payment_gateways();
	if ( ! isset( $gateways[ $payment_method ] ) ) {
		return array( 'result' => 'failure', 'messages' => array( 'Invalid payment method.' ) );
	}
	$order = wc_create_order(
		array(
			'total'          => $total,
			'payment_method' => $payment_method,
		)
	);
	$GLOBALS['wc_standin_notices'] = array();
	$result                        = $gateways[ $payment_method ]->process_payment( $order->get_id() );
	$result['order_id']            = $order->get_id();
	$result['messages']            = array_column( $GLOBALS['wc_standin_notices'], 'notice' );
	return $result;
}

add_action(
	'template_redirect',
	static function () {
		// phpcs:disable WordPress.Security.NonceVerification
		$page = sanitize_key( wp_unslash( $_GET['tender-standin'] ?? '' ) );
		if ( 'checkout' === $page && 'POST' === $_SERVER['REQUEST_METHOD'] ) {
			$result = wc_standin_pay_order( sanitize_key( wp_unslash( $_POST['payment_method'] ?? '' ) ), wc_standin_decimal( wp_unslash( $_POST['total'] ?? '' ) ) );
			if ( 'success' === ( $result['result'] ?? '' ) ) {
				wp_redirect( $result['redirect'] ); // phpcs:ignore WordPress.Security.SafeRedirect -- the gateway's checkout page
				exit;
			}
			status_header( 200 );
			printf( '<!doctype html><title>Checkout</title><ul class="woocommerce-error" role="alert" data-order="%d">', (int) ( $result['order_id'] ?? 0 ) );
			foreach ( $result['messages'] as $message ) {
				printf( '<li>%s</li>', esc_html( $message ) );
			}
			echo '</ul>';
			exit;
		}
		if ( 'order-pay' === $page && 'POST' === $_SERVER['REQUEST_METHOD'] ) {
			// WC_Shortcode_Checkout::order_pay: pay an existing order again with its gateway.
			$order   = wc_get_order( absint( $_GET['order'] ?? 0 ) );
			$gateway = $order ? ( WC()->payment_gateways()->get_available_payment_gateways()[ $order->get_payment_method() ] ?? null ) : null;
			$result  = $gateway ? $gateway->process_payment( $order->get_id() ) : array( 'result' => 'failure' );
			if ( 'success' === ( $result['result'] ?? '' ) ) {
				wp_redirect( $result['redirect'] ); // phpcs:ignore WordPress.Security.SafeRedirect
				exit;
			}
			status_header( 400 );
			exit;
		}
		if ( 'checkout-block' === $page ) {
			wc_standin_checkout_block( wc_standin_decimal( wp_unslash( $_GET['total'] ?? '25.00' ) ) );
			exit;
		}
		if ( 'checkout' === $page ) {
			$total = wc_standin_decimal( wp_unslash( $_GET['total'] ?? '25.00' ) );
			echo '<!doctype html><html lang="en"><title>Checkout</title><h1>Checkout</h1>';
			printf( '<form method="post" id="checkout"><p>Total: <span id="total">%s</span> USD</p><input type="hidden" name="total" value="%s"><fieldset><legend>Payment method</legend>', esc_html( $total ), esc_attr( $total ) );
			foreach ( WC()->payment_gateways()->get_available_payment_gateways() as $id => $gateway ) {
				printf( '<label><input type="radio" name="payment_method" id="payment_method_%1$s" value="%1$s"> %2$s</label>', esc_attr( $id ), esc_html( $gateway->get_title() ) );
				$gateway->payment_fields();
			}
			echo '</fieldset><button type="submit" id="place_order">Place order</button></form></html>';
			exit;
		}
		if ( isset( $_GET['order-received'] ) ) {
			$order = wc_get_order( absint( $_GET['order-received'] ) );
			if ( ! $order || ! hash_equals( $order->get_order_key(), (string) wp_unslash( $_GET['key'] ?? '' ) ) ) {
				status_header( 404 );
				exit;
			}
			printf( '<!doctype html><html lang="en"><title>Order received</title><h1>Order received</h1><p>Order #%d is <span id="order-status">%s</span>.</p></html>', (int) $order->get_id(), esc_html( $order->get_status() ) );
			exit;
		}
		// phpcs:enable
	}
);

/**
 * The Checkout block's page: WordPress's own wp-element (React) and wp-i18n, the stand-in's
 * registry, every active payment method's scripts and data, then the block that renders them.
 */
function wc_standin_checkout_block( string $total ): void {
	$base = plugins_url( 'assets/', WC_PLUGIN_FILE );
	wp_register_script( 'wc-blocks-registry', $base . 'blocks-registry.js', array(), WC_VERSION, false );
	wp_register_script( 'wc-settings', false, array( 'wc-blocks-registry' ), WC_VERSION, false );
	$registry = \Automattic\WooCommerce\Blocks\Payments\PaymentMethodRegistry::instance();
	$handles  = array();
	$settings = array();
	foreach ( $registry->get_all_active_registered() as $name => $method ) {
		$handles                    = array_merge( $handles, $method->get_payment_method_script_handles() );
		$settings[ $name . '_data' ] = $method->get_payment_method_data();
	}
	wp_add_inline_script( 'wc-blocks-registry', 'window.wcStandinSettings = ' . wp_json_encode( $settings ) . ';', 'before' );
	wp_register_script( 'wc-standin-checkout-block', $base . 'checkout-block.js', array_merge( array( 'wp-element', 'wc-blocks-registry' ), $handles ), WC_VERSION, true );
	printf( '<!doctype html><html lang="en"><title>Checkout</title><h1>Checkout</h1><p id="standin-notice" role="alert"></p><div id="standin-checkout-block" data-total="%s" data-checkout-url="%s"></div>', esc_attr( $total ), esc_url( rest_url( 'wc/store/v1/checkout' ) ) );
	wp_print_scripts( array( 'wc-standin-checkout-block' ) );
	echo '</html>';
}

/** The Store API checkout route of Checkout Blocks, for a registered, active payment method type. */
add_action(
	'rest_api_init',
	static function () {
		register_rest_route(
			'wc/store/v1',
			'/checkout',
			array(
				'methods'             => 'POST',
				'permission_callback' => '__return_true',
				'callback'            => static function ( WP_REST_Request $request ) {
					$method   = sanitize_key( (string) $request->get_param( 'payment_method' ) );
					$registry = \Automattic\WooCommerce\Blocks\Payments\PaymentMethodRegistry::instance();
					if ( ! isset( $registry->get_all_active_registered()[ $method ] ) ) {
						return new WP_Error( 'woocommerce_rest_checkout_payment_method_disabled', 'This payment method is not available.', array( 'status' => 400 ) );
					}
					$result = wc_standin_pay_order( $method, wc_standin_decimal( (string) $request->get_param( 'total' ) ) );
					return array(
						'order_id'       => $result['order_id'] ?? 0,
						'payment_method' => $method,
						'payment_result' => array(
							'payment_status'  => 'success' === ( $result['result'] ?? '' ) ? 'success' : 'failure',
							'payment_details' => array_map( static fn ( $m ) => array( 'key' => 'message', 'value' => $m ), $result['messages'] ?? array() ),
							'redirect_url'    => (string) ( $result['redirect'] ?? '' ),
						),
					);
				},
			)
		);
		// What Checkout Blocks would hand the browser: the registered payment methods' data.
		register_rest_route(
			'wc/store/v1',
			'/standin-payment-methods',
			array(
				'methods'             => 'GET',
				'permission_callback' => '__return_true',
				'callback'            => static function () {
					$registry = \Automattic\WooCommerce\Blocks\Payments\PaymentMethodRegistry::instance();
					$scripts  = array();
					foreach ( $registry->get_all_active_registered() as $name => $method ) {
						$scripts[ $name ] = $method->get_payment_method_script_handles();
					}
					return $registry->get_all_registered_script_data() + array(
						'scripts'  => $scripts,
						'features' => \Automattic\WooCommerce\Utilities\FeaturesUtil::$declared,
					);
				},
			)
		);
	}
);
