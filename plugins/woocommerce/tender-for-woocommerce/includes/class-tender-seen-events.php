<?php
/**
 * The once-per-event-id table: a claim is an INSERT that the primary key lets through once.
 *
 * @package Tender
 */

defined( 'ABSPATH' ) || exit;

class Tender_Seen_Events implements Tender_Seen_Store {
	/**
	 * How long an event id is remembered. Tender retries a delivery for about 3 days; after 30 an
	 * id is forgotten, and a later redelivery would only re-read an invoice whose order has moved
	 * on already (orders never move backwards), so it changes nothing either.
	 */
	public const KEEP_SECONDS = 30 * 86400;
	public const PRUNE_HOOK   = 'tender_prune_seen_events';

	public static function table(): string {
		global $wpdb;
		return $wpdb->prefix . 'tender_seen_events';
	}

	/** register_activation_hook target (and safe to run again). */
	public static function create_table(): void {
		global $wpdb;
		$table   = self::table();
		$charset = $wpdb->get_charset_collate();
		$wpdb->query( "CREATE TABLE IF NOT EXISTS $table (event_id VARCHAR(64) NOT NULL PRIMARY KEY, seen_at BIGINT NOT NULL) $charset" ); // phpcs:ignore WordPress.DB.PreparedSQL
	}

	public function claim( string $event_id ): bool {
		global $wpdb;
		$table = self::table();
		// One row or none: of two concurrent claims of one id, the database lets exactly one in.
		$inserted = $wpdb->query( $wpdb->prepare( "INSERT IGNORE INTO $table (event_id, seen_at) VALUES (%s, %d)", $event_id, time() ) ); // phpcs:ignore WordPress.DB.PreparedSQL
		if ( false === $inserted ) {
			throw new RuntimeException( 'the seen-events table is not writable' );
		}
		return 1 === $inserted;
	}

	/** The daily clean-up (the WP-Cron hook; WordPress passes it an empty argument). */
	public static function prune_now(): void {
		self::prune( time() );
	}

	/** Ids seen more than KEEP_SECONDS before `now` go. Returns how many. */
	public static function prune( int $now ): int {
		global $wpdb;
		$table = self::table();
		return (int) $wpdb->query( $wpdb->prepare( "DELETE FROM $table WHERE seen_at < %d", $now - self::KEEP_SECONDS ) ); // phpcs:ignore WordPress.DB.PreparedSQL
	}

	/** register_activation_hook: the table, and the daily clean-up. */
	public static function activate(): void {
		self::create_table();
		if ( ! wp_next_scheduled( self::PRUNE_HOOK ) ) {
			wp_schedule_event( time() + 3600, 'daily', self::PRUNE_HOOK );
		}
	}

	public function release( string $event_id ): void {
		global $wpdb;
		$wpdb->delete( self::table(), array( 'event_id' => $event_id ) );
	}
}
