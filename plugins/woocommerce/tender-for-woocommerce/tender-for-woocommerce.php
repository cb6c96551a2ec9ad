<?php
/**
 * Plugin Name:          Tender for WooCommerce
 * Plugin URI:           https://github.com/tender-payments/tender
 * Description:          Take crypto payments through Tender: one invoice per order, the buyer pays on Tender's hosted checkout, and Tender's signed notifications mark the order paid.
 * Version:              1.1.0
 * Requires at least:    6.2
 * Tested up to:         6.8
 * Requires PHP:         8.1
 * Requires Plugins:     woocommerce
 * WC requires at least: 8.0
 * WC tested up to:      10.0
 * Author:               Tender
 * License:              MIT
 * License URI:          https://opensource.org/licenses/MIT
 * Text Domain:          tender-for-woocommerce
 * Domain Path:          /languages
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

const TENDER_PLUGIN_VERSION = '1.1.0';
const TENDER_PLUGIN_FILE    = __FILE__;

foreach ( array( 'money', 'api', 'settings', 'connection', 'receiver', 'seen-events', 'order-sync', 'checkout', 'refunds', 'reconciliation', 'install', 'settings-page', 'order-screen', 'webhook-endpoint' ) as $tender_class ) {
	require_once __DIR__ . "/includes/class-tender-$tender_class.php";
}

add_action(
	'init',
	static function () {
		load_plugin_textdomain( 'tender-for-woocommerce', false, dirname( plugin_basename( TENDER_PLUGIN_FILE ) ) . '/languages' );
	}
);

// HPOS (custom order tables) and Checkout Blocks: the plugin reaches orders only through
// WooCommerce's order API, and registers a Blocks payment method type.
add_action(
	'before_woocommerce_init',
	static function () {
		if ( class_exists( \Automattic\WooCommerce\Utilities\FeaturesUtil::class ) ) {
			\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'custom_order_tables', TENDER_PLUGIN_FILE, true );
			\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'cart_checkout_blocks', TENDER_PLUGIN_FILE, true );
		}
	}
);

add_action(
	'plugins_loaded',
	static function () {
		if ( ! class_exists( 'WC_Payment_Gateway' ) ) {
			return; // WooCommerce is not active: nothing to register.
		}
		Tender_Install::maybe_upgrade();
		require_once __DIR__ . '/includes/class-tender-gateway.php';
		add_filter(
			'woocommerce_payment_gateways',
			static function ( $gateways ) {
				$gateways[] = 'Tender_Gateway';
				return $gateways;
			}
		);
		// Tender's deliveries arrive at ?wc-api=tender (the webhook_url sent at connect).
		add_action( 'woocommerce_api_tender', array( Tender_Webhook_Endpoint::class, 'handle_request' ) );
		// The settings page's own buttons (Retry connect, Check status, Reconnect) submit the settings
		// form without WooCommerce's "save" field: WooCommerce saves (nonce checked) only if told so.
		add_filter( 'woocommerce_save_settings_checkout_tender', static fn ( $save ) => $save || isset( $_POST['tender_action'] ) ); // phpcs:ignore WordPress.Security.NonceVerification -- WooCommerce checks the form's nonce before saving
		add_action( 'woocommerce_order_actions_end', array( Tender_Order_Screen::class, 'button' ) );
		add_action( 'admin_post_' . Tender_Order_Screen::ACTION, array( Tender_Order_Screen::class, 'handle' ) );
	}
);

add_action(
	'woocommerce_blocks_loaded',
	static function () {
		if ( ! class_exists( \Automattic\WooCommerce\Blocks\Payments\Integrations\AbstractPaymentMethodType::class ) ) {
			return;
		}
		require_once __DIR__ . '/includes/class-tender-blocks.php';
		add_action(
			'woocommerce_blocks_payment_method_type_registration',
			static function ( $registry ) {
				$registry->register( new Tender_Blocks_Payment_Method() );
			}
		);
	}
);

add_filter( 'cron_schedules', array( Tender_Reconciliation::class, 'add_schedule' ) ); // phpcs:ignore WordPress.WP.CronInterval -- five minutes, on purpose
add_action( Tender_Seen_Events::PRUNE_HOOK, array( Tender_Seen_Events::class, 'prune_now' ), 10, 0 );
add_action( Tender_Reconciliation::HOOK, array( Tender_Reconciliation::class, 'run_now' ), 10, 0 );
register_activation_hook( __FILE__, array( Tender_Install::class, 'activate' ) );
register_deactivation_hook( __FILE__, array( Tender_Install::class, 'deactivate' ) );
