<?php
/**
 * The once-per-event-id table: a claim is an INSERT that the primary key lets through once.
 *
 * @package Tender
 */

declare(strict_types=1);

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

	/**
	 * The table, created or brought up to date by WordPress's dbDelta (activation and upgrades;
	 * safe to run again). Besides event ids it holds the "order N was completed" claims.
	 */
	public static function create_table(): void {
		global $wpdb;
		if ( ! function_exists( 'dbDelta' ) ) {
			require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		}
		$table   = self::table();
		$charset = $wpdb->get_charset_collate();
		// dbDelta's format: one column a line, two spaces after PRIMARY KEY.
		dbDelta(
			"CREATE TABLE $table (
  event_id varchar(64) NOT NULL,
  seen_at bigint(20) NOT NULL,
  PRIMARY KEY  (event_id)
) $charset;"
		);
	}

	public static function drop_table(): void {
		global $wpdb;
		$wpdb->query( 'DROP TABLE IF EXISTS ' . self::table() ); // phpcs:ignore WordPress.DB.PreparedSQL,WordPress.DB.DirectDatabaseQuery
	}

	public function claim( string $event_id ): bool {
		global $wpdb;
		$table = self::table();
		// One row or none: of two concurrent claims of one id, the database lets exactly one in.
		$inserted = $wpdb->query( $wpdb->prepare( "INSERT IGNORE INTO $table (event_id, seen_at) VALUES (%s, %d)", $event_id, time() ) ); // phpcs:ignore WordPress.DB.PreparedSQL
		if ( false === $inserted ) {
			throw new RuntimeException( 'the seen-events table is not writable' ); // no-i18n: never shown (answered as a 500)
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

	public function release( string $event_id ): void {
		global $wpdb;
		$wpdb->delete( self::table(), array( 'event_id' => $event_id ) );
	}
}
