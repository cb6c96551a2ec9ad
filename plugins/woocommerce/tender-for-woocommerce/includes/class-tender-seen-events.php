<?php
/**
 * The once-per-event-id table: a claim is an INSERT that the primary key lets through once.
 *
 * @package Tender
 */

defined( 'ABSPATH' ) || exit;

class Tender_Seen_Events implements Tender_Seen_Store {
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

	public function release( string $event_id ): void {
		global $wpdb;
		$wpdb->delete( self::table(), array( 'event_id' => $event_id ) );
	}
}
