<?php
/**
 * Test probe (must-use plugin of the test site only): records the X-Tender-* headers of every
 * request to ?wc-api=tender, and the answer sent, in TENDER_TEST_PROBE_FILE (JSON lines), so a
 * test can see what Tender sent (two v1= values after a reconnect) and what the plugin answered.
 * With the option tender_test_block_notifications set, it answers every request there 403 before
 * the plugin sees it, as a firewall or a security plugin in front of a shop does.
 * Also: WordPress sends no mail from a test site; and on Debian's WordPress package (6.1), which is
 * older than the plugin's declared minimum (6.2, WooCommerce 8's own), the site reports 6.2 so the
 * plugin activates: the stand-in is not WooCommerce 8, and the real pair runs with WORDPRESS_DIR.
 */

// Each payment_complete() that WooCommerce runs, one line each (the stand-in counts its own): a
// real WooCommerce's orders are counted here, and a line is never lost to a concurrent request.
add_action(
	'woocommerce_pre_payment_complete',
	static function ( $order_id ) {
		if ( defined( 'TENDER_TEST_PROBE_FILE' ) && ! defined( 'WC_STANDIN' ) ) {
			file_put_contents( TENDER_TEST_PROBE_FILE . '.completions', (int) $order_id . ' ' . microtime( true ) . "\n", FILE_APPEND | LOCK_EX );
		}
	}
);

if ( version_compare( $GLOBALS['wp_version'], '6.2', '<' ) ) {
	$GLOBALS['wp_version'] = '6.2';
}

function wp_mail() {
	return true;
}

add_action(
	'woocommerce_api_request',
	static function ( $request ) {
		if ( 'tender' !== $request || ! defined( 'TENDER_TEST_PROBE_FILE' ) ) {
			return;
		}
		$seen = array();
		foreach ( $_SERVER as $key => $value ) {
			if ( str_starts_with( $key, 'HTTP_X_TENDER_' ) ) {
				$seen[ $key ] = $value;
			}
		}
		if ( get_option( 'tender_test_block_notifications' ) ) {
			$seen['status']      = 403;
			$seen['answer']      = 'blocked';
			$seen['recorded_at'] = microtime( true );
			file_put_contents( TENDER_TEST_PROBE_FILE, json_encode( $seen ) . "\n", FILE_APPEND | LOCK_EX );
			status_header( 403 );
			echo 'Forbidden by the test firewall';
			exit;
		}
		ob_start(
			static function ( $answer ) use ( $seen ) {
				$seen['answer']      = $answer;
				$seen['status']      = http_response_code();
				$seen['recorded_at'] = microtime( true );
				file_put_contents( TENDER_TEST_PROBE_FILE, json_encode( $seen ) . "\n", FILE_APPEND | LOCK_EX );
				return $answer;
			}
		);
	},
	0
);
