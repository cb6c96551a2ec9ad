<?php
/**
 * The unit layer: the plugin's classes on plain PHP. Only the few WordPress functions they call
 * are provided here (options, WP-Cron events and the database in memory, translations as the
 * identity); WordPress itself is exercised by the real-WordPress tests (tests/e2e/ in the
 * repository), not here.
 */

define( 'ABSPATH', __DIR__ . '/' );
define( 'TENDER_PLUGIN_VERSION', '1.1.0' );

const TENDER_PLUGIN_DIR = __DIR__ . '/../../tender-for-woocommerce';
const TENDER_VECTORS    = __DIR__ . '/../../../../kit/tender_receiver_vectors.json';

$GLOBALS['tender_test_options'] = array();
$GLOBALS['tender_test_cron']    = array();

function get_option( $name, $default_value = false ) {
	return array_key_exists( $name, $GLOBALS['tender_test_options'] ) ? $GLOBALS['tender_test_options'][ $name ] : $default_value;
}

function update_option( $name, $value, $autoload = null ) {
	$GLOBALS['tender_test_options'][ $name ] = $value;
	return true;
}

function delete_option( $name ) {
	unset( $GLOBALS['tender_test_options'][ $name ] );
	return true;
}

function __( $text, $domain = 'default' ) {
	return $text;
}

function wp_json_encode( $data, $options = 0, $depth = 512 ) {
	return json_encode( $data, $options, $depth );
}

function wp_parse_url( $url, $component = -1 ) {
	return parse_url( $url, $component );
}

function get_woocommerce_currency() {
	return (string) get_option( 'woocommerce_currency', 'USD' );
}

function wp_next_scheduled( $hook, $args = array() ) {
	return $GLOBALS['tender_test_cron'][ $hook ]['at'] ?? false;
}

function wp_schedule_event( $timestamp, $recurrence, $hook, $args = array() ) {
	$GLOBALS['tender_test_cron'][ $hook ] = array( 'at' => $timestamp, 'recurrence' => $recurrence );
	return true;
}

function wp_clear_scheduled_hook( $hook, $args = array() ) {
	$found = isset( $GLOBALS['tender_test_cron'][ $hook ] ) ? 1 : 0;
	unset( $GLOBALS['tender_test_cron'][ $hook ] );
	return $found;
}

function wp_get_schedules() {
	return apply_cron_schedules( array( 'daily' => array( 'interval' => 86400 ) ) );
}

function apply_cron_schedules( array $schedules ): array {
	return Tender_Reconciliation::add_schedule( $schedules );
}

function dbDelta( $queries = '', $execute = true ) {
	$GLOBALS['wpdb']->queries[] = $queries;
	return array();
}

/** $wpdb as far as the plugin's table needs it: the statements it was sent. */
final class Recording_Wpdb {
	public string $prefix = 'wp_';
	public array $queries = array();

	public function get_charset_collate() {
		return 'DEFAULT CHARSET=utf8mb4';
	}

	public function query( $sql ) {
		$this->queries[] = $sql;
		return 1;
	}
}
$GLOBALS['wpdb'] = new Recording_Wpdb();

foreach ( array( 'money', 'api', 'settings', 'connection', 'receiver', 'seen-events', 'order-sync', 'checkout', 'refunds', 'reconciliation', 'install' ) as $tender_class ) {
	require_once TENDER_PLUGIN_DIR . "/includes/class-tender-$tender_class.php";
}
require_once __DIR__ . '/fakes.php';
