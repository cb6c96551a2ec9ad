<?php
/**
 * Deleting the plugin: disconnect from Tender (its key is revoked, nothing more is sent to this
 * shop), then remove every option, the plugin's table and its scheduled events (Tender_Install).
 * WordPress runs this file alone, without the plugin's main file.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

foreach ( array( 'money', 'api', 'settings', 'connection', 'receiver', 'seen-events', 'order-sync', 'reconciliation', 'install' ) as $tender_class ) {
	require_once __DIR__ . "/includes/class-tender-$tender_class.php";
}
Tender_Install::uninstall();
