<?php
/**
 * The unit layer: the plugin's classes on plain PHP. Only the few WordPress functions they call
 * are provided here (options in memory); WordPress itself is exercised by the real-WordPress
 * tests (tests/plugins/ in the repository), not here.
 */

define( 'ABSPATH', __DIR__ . '/' );
define( 'TENDER_PLUGIN_VERSION', '1.0.0-test' );

const TENDER_PLUGIN_DIR = __DIR__ . '/../../tender-for-woocommerce';
const TENDER_VECTORS    = __DIR__ . '/../../../../kit/tender_receiver_vectors.json';

$GLOBALS['tender_test_options'] = array();

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

foreach ( array( 'api', 'settings', 'connection', 'receiver', 'order-sync', 'checkout', 'refunds' ) as $tender_class ) {
	require_once TENDER_PLUGIN_DIR . "/includes/class-tender-$tender_class.php";
}
require_once __DIR__ . '/fakes.php';
