<?php
/**
 * Amounts as decimal strings, exactly (never floats), in a currency's ISO 4217 decimals: Tender
 * refuses an amount with more decimals than its currency has ("1500.00" yen), so the plugin writes
 * each order total with exactly those.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

final class Tender_Money {
	/** ISO 4217 currencies whose minor units are not two (the rest have two). */
	private const DECIMALS = array(
		'BIF' => 0, 'CLP' => 0, 'DJF' => 0, 'GNF' => 0, 'ISK' => 0, 'JPY' => 0, 'KMF' => 0, 'KRW' => 0, 'PYG' => 0,
		'RWF' => 0, 'UGX' => 0, 'UYI' => 0, 'VND' => 0, 'VUV' => 0, 'XAF' => 0, 'XOF' => 0, 'XPF' => 0,
		'BHD' => 3, 'IQD' => 3, 'JOD' => 3, 'KWD' => 3, 'LYD' => 3, 'OMR' => 3, 'TND' => 3,
		'CLF' => 4, 'UYW' => 4,
	); // phpcs:ignore WordPress.Arrays.ArrayDeclarationSpacing

	public static function decimals( string $currency ): int {
		return self::DECIMALS[ strtoupper( $currency ) ] ?? 2;
	}

	/**
	 * An order total as Tender wants it: "25.00" USD, "1500" JPY, "1.250" KWD. WooCommerce keeps
	 * totals as strings with the shop's price decimals; extra zeros go, other extra digits cannot be
	 * sent without changing what is owed, so they are refused.
	 *
	 * @param string|float|int $total
	 */
	public static function amount( $total, string $currency ): string {
		$text = is_float( $total ) ? rtrim( rtrim( sprintf( '%.8F', $total ), '0' ), '.' ) : trim( (string) $total );
		if ( ! preg_match( '/^(\d+)(?:\.(\d+))?$/', $text, $parts ) ) {
			/* translators: %s: the order total as WooCommerce gave it. */
			throw new InvalidArgumentException( sprintf( __( 'the order total is not an amount: %s', 'tender-for-woocommerce' ), $text ) );
		}
		$decimals = self::decimals( $currency );
		$fraction = $parts[2] ?? '';
		if ( '' !== trim( substr( $fraction, $decimals ), '0' ) ) {
			/* translators: 1: the order total, 2: its currency, 3: how many decimals the currency has. */
			throw new InvalidArgumentException( sprintf( __( 'the order total %1$s has more decimals than %2$s has (%3$d)', 'tender-for-woocommerce' ), $text, $currency, $decimals ) );
		}
		$fraction = str_pad( substr( $fraction, 0, $decimals ), $decimals, '0' );
		return $parts[1] . ( $decimals > 0 ? '.' . $fraction : '' );
	}

	/** a - b, exactly, with the larger of their scales. */
	public static function difference( string $a, string $b ): string {
		$scale  = max( self::scale_of( $a ), self::scale_of( $b ) );
		$units  = self::to_units( $a, $scale ) - self::to_units( $b, $scale );
		$sign   = $units < 0 ? '-' : '';
		$digits = str_pad( (string) abs( $units ), $scale + 1, '0', STR_PAD_LEFT );
		return $sign . ( 0 === $scale ? $digits : substr( $digits, 0, -$scale ) . '.' . substr( $digits, -$scale ) );
	}

	/** -1, 0 or 1; anything that is not a decimal compares as less (-1). */
	public static function compare( string $a, string $b ): int {
		try {
			$difference = self::difference( $a, $b );
		} catch ( InvalidArgumentException $not_a_number ) {
			return -1;
		}
		if ( str_starts_with( $difference, '-' ) ) {
			return -1;
		}
		return '' === trim( $difference, '0.' ) ? 0 : 1;
	}

	private static function scale_of( string $decimal ): int {
		$dot = strpos( $decimal, '.' );
		return false === $dot ? 0 : strlen( $decimal ) - $dot - 1;
	}

	private static function to_units( string $decimal, int $scale ): int {
		if ( ! preg_match( '/^(-?)(\d+)(?:\.(\d+))?$/', trim( $decimal ), $parts ) ) {
			throw new InvalidArgumentException( "not a decimal amount: $decimal" ); // no-i18n: compare() turns it into "less"
		}
		$units = (int) ( $parts[2] . str_pad( $parts[3] ?? '', $scale, '0' ) );
		return '-' === $parts[1] ? -$units : $units;
	}
}
