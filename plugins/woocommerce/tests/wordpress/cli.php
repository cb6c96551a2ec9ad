<?php
/**
 * The test harness's WordPress commands (tests/support/wordpress.py), run with php-cli against a
 * test site: `php cli.php DOCROOT HOST COMMAND [ARG…]`; prints JSON.
 *
 *   create-database                 drop and create the site's MariaDB database
 *   install ADMIN_PASSWORD          WordPress's own installer
 *   activate PLUGIN_FILE            activate_plugin (runs the plugin's activation hook)
 *   option NAME | set-option NAME JSON
 *   order ID                        an order as the plugin left it (status, meta, notes)
 *   order-of-invoice INVOICE_ID     the order whose Tender invoice it is
 *   shop-setup                      a real WooCommerce made ready to sell (nothing for the stand-in)
 *   product PRICE                   a virtual product at that price (a real WooCommerce)
 *   edit-order ID TOTAL CURRENCY    what an administrator's edit of an unpaid order changes
 *   seen-events                     the plugin's once-per-event table
 *   seen-add EVENT_ID SEEN_AT       a row in it, as if seen then
 *   next-scheduled HOOK | do-action HOOK   WP-Cron: when a hook runs next; run it now
 *   plugin-active PLUGIN_FILE
 *   wp-version                      WordPress's version, as its files say
 *   uninstall PLUGIN_FILE           deactivate, then WordPress's uninstall_plugin (as Delete does)
 *   tender-leftovers                options, tables and WP-Cron events of the plugin still there
 */

[ , $docroot, $host, $command ] = $argv;
$args = array_slice( $argv, 4 );
$_SERVER['HTTP_HOST']   = $host;
$_SERVER['SERVER_NAME'] = explode( ':', $host )[0];
$_SERVER['REQUEST_URI'] = '/';
define( 'ABSPATH', rtrim( $docroot, '/' ) . '/' );

if ( 'create-database' === $command ) {
	// wp-config.php's constants only; WordPress is not loaded (its database does not exist yet).
	$config = file_get_contents( ABSPATH . 'wp-config.php' );
	preg_match_all( "/define\\( '(DB_[A-Z]+)', '([^']*)' \\);/", $config, $found, PREG_SET_ORDER );
	$db = array_column( $found, 2, 1 );
	[ $host_name, $port ] = array_pad( explode( ':', $db['DB_HOST'] ), 2, 3306 );
	$mysql = new mysqli( $host_name, $db['DB_USER'], $db['DB_PASSWORD'], '', (int) $port );
	$name  = $mysql->real_escape_string( $db['DB_NAME'] );
	$mysql->query( "DROP DATABASE IF EXISTS `$name`" );
	$mysql->query( "CREATE DATABASE `$name` CHARACTER SET utf8mb4" );
	echo json_encode( array( 'database' => $db['DB_NAME'] ) ), "\n";
	exit;
}

if ( 'install' === $command ) {
	define( 'WP_INSTALLING', true );
}
require ABSPATH . 'wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';

switch ( $command ) {
	case 'install':
		require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		$result = wp_install( 'Tender test shop', 'admin', 'admin@shop.example', false, '', $args[0] );
		update_option( 'permalink_structure', '' );
		update_option( 'woocommerce_currency', 'USD' );
		$out = array( 'user_id' => $result['user_id'] );
		break;
	case 'activate':
		$error = activate_plugin( $args[0] );
		$out   = array( 'activated' => ! is_wp_error( $error ), 'error' => is_wp_error( $error ) ? $error->get_error_message() : null );
		break;
	case 'uninstall':
		deactivate_plugins( $args[0] );
		uninstall_plugin( $args[0] );
		$out = array( 'uninstalled' => ! is_plugin_active( $args[0] ) );
		break;
	case 'tender-leftovers':
		global $wpdb;
		$events = array();
		foreach ( (array) _get_cron_array() as $hooks ) {
			$events = array_merge( $events, array_filter( array_keys( (array) $hooks ), static fn ( $hook ) => str_starts_with( (string) $hook, 'tender_' ) ) );
		}
		$out = array(
			'options' => $wpdb->get_col( "SELECT option_name FROM {$wpdb->options} WHERE option_name LIKE 'tender\\_%' OR option_name LIKE 'woocommerce\\_tender%'" ), // phpcs:ignore
			'tables'  => $wpdb->get_col( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $wpdb->prefix . 'tender' ) . '%' ) ),
			'events'  => array_values( array_unique( $events ) ),
		);
		break;
	case 'wp-version':
		require ABSPATH . WPINC . '/version.php';   // the files' own version (the probe may report 6.2 on 6.1)
		$out = array( 'version' => $wp_version );
		break;
	case 'plugin-active':
		$out = array( 'active' => is_plugin_active( $args[0] ) );
		break;
	case 'option':
		$out = array( 'value' => get_option( $args[0], null ) );
		break;
	case 'set-option':
		update_option( $args[0], json_decode( $args[1], true ) );
		$out = array( 'value' => get_option( $args[0], null ) );
		break;
	case 'order':
		$out = defined( 'WC_STANDIN' ) ? tender_test_standin_order( (int) $args[0] ) : tender_test_order( (int) $args[0] );
		break;
	case 'order-of-invoice':
		$found = array_filter( wc_get_orders( array( 'limit' => -1 ) ), static fn ( $order ) => $order->get_meta( '_tender_invoice_id' ) === $args[0] );
		$out   = array( 'id' => $found ? reset( $found )->get_id() : null );
		break;
	case 'shop-setup':
		$out = defined( 'WC_STANDIN' ) ? array( 'hpos' => false ) : tender_test_shop_setup();
		break;
	case 'product':
		$product = new WC_Product_Simple();
		$product->set_name( 'Coffee ' . $args[0] );
		$product->set_regular_price( $args[0] );
		$product->set_virtual( true );
		$out = array( 'id' => $product->save() );
		break;
	case 'edit-order':
		$order = wc_get_order( (int) $args[0] );
		if ( defined( 'WC_STANDIN' ) ) {
			update_post_meta( (int) $args[0], '_order_total', $args[1] );
			update_post_meta( (int) $args[0], '_order_currency', $args[2] );
		} else {   // as an administrator's edit does: another total, another currency
			$order->set_total( $args[1] );
			$order->set_currency( $args[2] );
			$order->save();
		}
		$out = array( 'edited' => (int) $args[0] );
		break;
	case 'pay-url':     // the buyer's "Pay for this order" address of an unpaid order
		$out = array( 'url' => wc_get_order( (int) $args[0] )->get_checkout_payment_url() );
		break;
	case 'next-scheduled':
		$out = array( 'at' => wp_next_scheduled( $args[0] ) );
		break;
	case 'do-action':
		do_action( $args[0] );
		$out = array( 'done' => $args[0] );
		break;
	case 'seen-add':
		global $wpdb;
		$out = array( 'added' => $wpdb->insert( "{$wpdb->prefix}tender_seen_events", array( 'event_id' => $args[0], 'seen_at' => (int) $args[1] ) ) );
		break;
	case 'seen-events':
		global $wpdb;
		$out = $wpdb->get_col( "SELECT event_id FROM {$wpdb->prefix}tender_seen_events ORDER BY event_id" ); // phpcs:ignore
		break;
	default:
		fwrite( STDERR, "unknown command $command\n" );
		exit( 2 );
}
echo json_encode( $out ), "\n";

/** The stand-in's order: its notes and payment_complete calls as it records them. */
function tender_test_standin_order( int $id ): ?array {
	$order = wc_get_order( $id );
	$meta  = array();
	foreach ( get_post_meta( $id ) as $key => $values ) {
		$meta[ $key ] = maybe_unserialize( $values[0] );
	}
	return $order ? array(
		'id'                     => $order->get_id(),
		'status'                 => $order->get_status(),
		'is_paid'                => $order->is_paid(),
		'transaction_id'         => $order->get_transaction_id(),
		'notes'                  => array_values( get_post_meta( $id, '_standin_note', false ) ),
		'payment_complete_calls' => (int) ( $meta['_standin_payment_complete_calls'] ?? 0 ),
		'paid_at'                => isset( $meta['_standin_paid_at'] ) ? (float) $meta['_standin_paid_at'] : null,
		'meta'                   => $meta,
	) : null;
}

/** A real WooCommerce's order (posts or HPOS): notes oldest first, completions from the probe's log. */
function tender_test_order( int $id ): ?array {
	$order = wc_get_order( $id );
	if ( ! $order ) {
		return null;
	}
	$meta = array();
	foreach ( $order->get_meta_data() as $item ) {
		$meta[ $item->key ] = $item->value;
	}
	$notes = array_reverse( array_map( static fn ( $note ) => $note->content, wc_get_order_notes( array( 'order_id' => $id ) ) ) );
	$log   = is_file( TENDER_TEST_PROBE_FILE . '.completions' ) ? file( TENDER_TEST_PROBE_FILE . '.completions', FILE_IGNORE_NEW_LINES ) : array();
	$times = array();
	foreach ( $log as $line ) {
		[ $order_id, $at ] = explode( ' ', $line );
		if ( (int) $order_id === $id ) {
			$times[] = (float) $at;
		}
	}
	return array(
		'id'                     => $id,
		'status'                 => $order->get_status(),
		'is_paid'                => $order->is_paid(),
		'transaction_id'         => $order->get_transaction_id(),
		'notes'                  => $notes,
		'payment_complete_calls' => count( $times ),
		'paid_at'                => $times ? min( $times ) : null,
		'meta'                   => $meta,
	);
}

/**
 * A real WooCommerce made ready to sell: USD, a US store, no "coming soon" page, no setup wizard,
 * HPOS as TENDER_TEST_HPOS says, and two checkout pages (the classic shortcode and the Checkout block).
 */
function tender_test_shop_setup(): array {
	if ( method_exists( 'WC_Install', 'newly_installed' ) ) {
		WC_Install::newly_installed();   // its defaults for a new shop (HPOS, coming soon) now, not at a later request
	}
	foreach ( array( 'woocommerce_currency' => 'USD', 'woocommerce_default_country' => 'US:CA', 'woocommerce_store_address' => '1 Test Street', 'woocommerce_store_city' => 'Testville', 'woocommerce_store_postcode' => '94016', 'woocommerce_coming_soon' => 'no', 'woocommerce_calc_taxes' => 'no', 'woocommerce_onboarding_profile' => array( 'skipped' => true ) ) as $name => $value ) {
		update_option( $name, $value );
	}
	delete_transient( '_wc_activation_redirect' );
	if ( '' !== (string) TENDER_TEST_HPOS ) {
		$enabled = '1' === (string) TENDER_TEST_HPOS;
		if ( $enabled ) {
			wc_get_container()->get( \Automattic\WooCommerce\Internal\DataStores\Orders\DataSynchronizer::class )->create_database_tables();
		}
		update_option( 'woocommerce_custom_orders_table_enabled', $enabled ? 'yes' : 'no' );
		update_option( 'woocommerce_feature_custom_order_tables_enabled', $enabled ? 'yes' : 'no' );
		update_option( 'woocommerce_custom_orders_table_data_sync_enabled', 'no' );
	}
	$pages = array();
	foreach ( array( 'tender-classic-checkout' => '<!-- wp:shortcode -->[woocommerce_checkout]<!-- /wp:shortcode -->', 'tender-block-checkout' => tender_test_checkout_block_markup() ) as $slug => $content ) {
		$id = wp_insert_post( array( 'post_type' => 'page', 'post_status' => 'publish', 'post_name' => $slug, 'post_title' => 'Checkout (' . $slug . ')', 'post_content' => $content ) );
		$pages[ $slug ] = get_permalink( $id );
	}
	return array( 'hpos' => \Automattic\WooCommerce\Utilities\OrderUtil::custom_orders_table_usage_is_enabled(), 'pages' => $pages, 'version' => WC()->version );
}

/** The Checkout block's markup, as this WooCommerce writes it for a new shop's checkout page. */
function tender_test_checkout_block_markup(): string {
	if ( method_exists( 'WC_Install', 'get_checkout_block_content' ) ) {
		$method = new ReflectionMethod( 'WC_Install', 'get_checkout_block_content' );
		$method->setAccessible( true );
		return $method->invoke( null );
	}
	$template = (string) file_get_contents( WP_PLUGIN_DIR . '/woocommerce/packages/woocommerce-blocks/templates/templates/checkout.html' );
	preg_match( '#<!-- wp:woocommerce/checkout .*<!-- /wp:woocommerce/checkout -->#s', $template, $found );
	return $found[0];
}
