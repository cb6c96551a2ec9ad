<?php
/**
 * What the plugin sets up and takes down: activation (its table and WP-Cron events), deactivation
 * (the events stop; settings and credentials stay, so the shop is still connected when it comes
 * back), upgrades between versions (keyed by the version stored at the last run), and uninstall
 * (disconnect from Tender, then every option, table and event the plugin made goes).
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

final class Tender_Install {
	/** WP-Cron hooks the plugin schedules: hook → recurrence. */
	public const EVENTS = array(
		Tender_Seen_Events::PRUNE_HOOK => 'daily',
		Tender_Reconciliation::HOOK    => Tender_Reconciliation::SCHEDULE,
	);

	/** register_activation_hook. */
	public static function activate(): void {
		self::upgrade( '' );
	}

	/** register_deactivation_hook: nothing runs while deactivated; nothing stored is lost. */
	public static function deactivate(): void {
		foreach ( array_keys( self::EVENTS ) as $hook ) {
			wp_clear_scheduled_hook( $hook );
		}
	}

	/** plugins_loaded: run the upgrade once after the plugin's files changed version. */
	public static function maybe_upgrade(): void {
		$stored = (string) get_option( Tender_Settings::VERSION, '' );
		if ( TENDER_PLUGIN_VERSION !== $stored ) {
			self::upgrade( $stored );
		}
	}

	/**
	 * From the stored version (or none) to this one. Each step is safe to run again: dbDelta brings
	 * the table to its current shape, events are scheduled only where missing.
	 */
	public static function upgrade( string $from ): void {
		Tender_Seen_Events::create_table();
		$schedules = wp_get_schedules();
		foreach ( self::EVENTS as $hook => $recurrence ) {
			if ( ! wp_next_scheduled( $hook ) && isset( $schedules[ $recurrence ] ) ) {
				wp_schedule_event( time() + 300, $recurrence, $hook );
			}
		}
		if ( '' !== $from && version_compare( $from, '1.1.0', '<' ) ) {
			// 1.0.x disconnected at deactivation; nothing of its data needs changing.
			delete_option( Tender_Settings::REFUNDS_PROBE );
		}
		update_option( Tender_Settings::VERSION, TENDER_PLUGIN_VERSION, false );
	}

	/**
	 * uninstall.php: disconnect at Tender (its key is revoked and nothing more is sent here), then
	 * delete every option, the table and the scheduled events. Orders keep their notes and meta:
	 * they are the shop's records.
	 */
	public static function uninstall( ?Tender_Connection $connection = null ): void {
		( $connection ?? new Tender_Connection() )->disconnect();
		self::deactivate();
		foreach ( Tender_Settings::ALL_OPTIONS as $option ) {
			delete_option( $option );
		}
		Tender_Seen_Events::drop_table();
	}
}
