<?php
/**
 * Plugin Name: WooCommerce (Tender's test stand-in)
 * Description: Not WooCommerce. The part of WooCommerce that Tender for WooCommerce calls, for testing the plugin on a real WordPress where WooCommerce itself cannot be installed. Never install it on a shop.
 * Version: 10.4.0-dev
 *
 * Each class and function below keeps the signature (name, parameters, defaults, hooks fired) of
 * WooCommerce's own, copied from the public woocommerce/woocommerce repository at version
 * 10.4.0-dev (trunk; plugins/woocommerce/woocommerce.php at commit 019bb47e4e6a). The files read:
 *   includes/abstracts/abstract-wc-payment-gateway.php   08842b384fa9
 *   includes/abstracts/abstract-wc-settings-api.php       ba5558efde4e
 *   includes/class-wc-order.php                           35335222464a
 *   includes/class-wc-api.php                             28ab394e0aa3 (handle_api_requests)
 *   src/Utilities/FeaturesUtil.php                        00122cd6f1c3
 *   src/Blocks/Payments/Integrations/AbstractPaymentMethodType.php  92ff66578903
 *   src/Blocks/Payments/PaymentMethodRegistry.php         178b1baf3c4c
 * The bodies are this stand-in's own and only as deep as the plugin's tests need: orders are
 * stored as posts with meta (WooCommerce's own legacy storage), the classic checkout is one form,
 * and the Store API checkout one REST route.
 *
 * @package TenderTests
 */

defined( 'ABSPATH' ) || exit;

define( 'WC_PLUGIN_FILE', __FILE__ );
define( 'WC_STANDIN', true );   // the test harness asks: stand-in, or a real WooCommerce
define( 'WC_VERSION', '10.4.0-dev' );

require_once __DIR__ . '/includes/settings-and-gateway.php';
require_once __DIR__ . '/includes/order.php';
require_once __DIR__ . '/includes/blocks-and-features.php';
require_once __DIR__ . '/includes/pages.php';

final class WooCommerce {
	public $version = WC_VERSION;
	private static ?WooCommerce $instance = null;
	private ?WC_Payment_Gateways $gateways = null;

	public static function instance() {
		return self::$instance ??= new self();
	}

	/**
	 * Return the WC API URL for a given request (WooCommerce::api_request_url).
	 *
	 * @param string    $request Requested endpoint.
	 * @param bool|null $ssl     If should use SSL, null if should auto detect. Default: null.
	 * @return string
	 */
	public function api_request_url( $request, $ssl = null ) {
		if ( is_null( $ssl ) ) {
			$scheme = wp_parse_url( home_url(), PHP_URL_SCHEME );
		} elseif ( $ssl ) {
			$scheme = 'https';
		} else {
			$scheme = 'http';
		}
		if ( strstr( get_option( 'permalink_structure' ), '/index.php/' ) ) {
			$api_request_url = trailingslashit( home_url( '/index.php/wc-api/' . $request, $scheme ) );
		} elseif ( get_option( 'permalink_structure' ) ) {
			$api_request_url = trailingslashit( home_url( '/wc-api/' . $request, $scheme ) );
		} else {
			$api_request_url = add_query_arg( 'wc-api', $request, trailingslashit( home_url( '', $scheme ) ) );
		}
		return esc_url_raw( apply_filters( 'woocommerce_api_request_url', $api_request_url, $request, $ssl ) );
	}

	public function payment_gateways() {
		return $this->gateways ??= new WC_Payment_Gateways();
	}
}

/** The shop's currency (WooCommerce > Settings > General). */
function get_woocommerce_currency() {
	return apply_filters( 'woocommerce_currency', get_option( 'woocommerce_currency', 'USD' ) );
}

// WC_Install::create_roles: the administrator manages WooCommerce and its orders.
register_activation_hook(
	__FILE__,
	static function () {
		$admin = get_role( 'administrator' );
		foreach ( array( 'manage_woocommerce', 'edit_shop_orders', 'edit_shop_order' ) as $capability ) {
			$admin->add_cap( $capability );
		}
	}
);

function WC() { // phpcs:ignore WordPress.NamingConventions.ValidFunctionName
	return WooCommerce::instance();
}

/**
 * WC_API::handle_api_requests, on parse_request as WooCommerce hooks it.
 */
add_action(
	'parse_request',
	static function () {
		global $wp;
		if ( ! empty( $_GET['wc-api'] ) ) {
			$wp->query_vars['wc-api'] = sanitize_key( wp_unslash( $_GET['wc-api'] ) );
		}
		if ( ! empty( $wp->query_vars['wc-api'] ) ) {
			ob_start();
			nocache_headers();
			$api_request = strtolower( sanitize_text_field( $wp->query_vars['wc-api'] ) );
			WC()->payment_gateways();
			do_action( 'woocommerce_api_request', $api_request );
			status_header( has_action( 'woocommerce_api_' . $api_request ) ? 200 : 400 );
			do_action( 'woocommerce_api_' . $api_request );
			ob_end_clean();
			die( '-1' );
		}
	},
	0
);
add_filter(
	'query_vars',
	static function ( $vars ) {
		$vars[] = 'wc-api';
		return $vars;
	},
	0
);

// WooCommerce::init fires before_woocommerce_init on init, priority 0; then woocommerce_init.
add_action(
	'init',
	static function () {
		do_action( 'before_woocommerce_init' );
		WC_Features::$declaring = false;
		do_action( 'woocommerce_init' );
	},
	0
);

// Blocks: Package::init on plugins_loaded fires woocommerce_blocks_loaded; the payment method
// registry initializes (fires its registration action) on init.
add_action(
	'plugins_loaded',
	static function () {
		do_action( 'woocommerce_blocks_loaded' );
	},
	20
);
add_action(
	'init',
	static function () {
		\Automattic\WooCommerce\Blocks\Payments\PaymentMethodRegistry::instance()->initialize();
	},
	5
);
