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
 *   edit-order ID TOTAL CURRENCY    what an administrator's edit of an unpaid order changes
 *   seen-events                     the plugin's once-per-event table
 *   seen-add EVENT_ID SEEN_AT       a row in it, as if seen then
 *   next-scheduled HOOK | do-action HOOK   WP-Cron: when a hook runs next; run it now
 *   plugin-active PLUGIN_FILE
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
		$order = wc_get_order( (int) $args[0] );
		$meta  = array();
		foreach ( get_post_meta( (int) $args[0] ) as $key => $values ) {
			$meta[ $key ] = maybe_unserialize( $values[0] );
		}
		$out = $order ? array(
			'id'                     => $order->get_id(),
			'status'                 => $order->get_status(),
			'is_paid'                => $order->is_paid(),
			'transaction_id'         => $order->get_transaction_id(),
			'notes'                  => array_values( get_post_meta( (int) $args[0], '_standin_note', false ) ),
			'payment_complete_calls' => (int) ( $meta['_standin_payment_complete_calls'] ?? 0 ),
			'paid_at'                => isset( $meta['_standin_paid_at'] ) ? (float) $meta['_standin_paid_at'] : null,
			'meta'                   => $meta,
		) : null;
		break;
	case 'edit-order':
		update_post_meta( (int) $args[0], '_order_total', $args[1] );
		update_post_meta( (int) $args[0], '_order_currency', $args[2] );
		$out = array( 'edited' => (int) $args[0] );
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
