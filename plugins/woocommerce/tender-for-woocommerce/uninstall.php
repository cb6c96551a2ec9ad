<?php
/**
 * Deleting the plugin removes what it stored: credentials (already gone after deactivation),
 * settings and the seen-events table.
 *
 * @package Tender
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

global $wpdb;
foreach ( array( 'woocommerce_tender_settings', 'tender_api_key', 'tender_webhook_secret', 'tender_integration_public_id', 'tender_connection', 'tender_pending_connect', 'tender_refunds_available' ) as $tender_option ) {
	delete_option( $tender_option );
}
$wpdb->query( "DROP TABLE IF EXISTS {$wpdb->prefix}tender_seen_events" ); // phpcs:ignore WordPress.DB
