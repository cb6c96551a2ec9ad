<?php
/**
 * The plugin's translation template, made from its sources (WP-CLI's `wp i18n make-pot` is not
 * needed): every string passed to WordPress's i18n functions in PHP (PHP's own tokenizer) and to
 * wp.i18n in the JavaScript, with its file:line and its translators comment.
 *
 *   php plugins/woocommerce/tools/make-pot.php PLUGIN_DIR           write PLUGIN_DIR/languages/<domain>.pot
 *   php plugins/woocommerce/tools/make-pot.php PLUGIN_DIR --check   exit 1 when the .pot is not current,
 *                                                                   or a text is shown without i18n
 *
 * "Shown without i18n" is a string literal of two words or more, outside an i18n call, on a line
 * without a `no-i18n` comment (for answers to Tender, which keep the kit's words). It is a guard
 * for the next change, not a proof: strings that are not prose (keys, SQL, formats) pass.
 *
 * @package Tender
 */

declare(strict_types=1);

const TENDER_I18N_DOMAIN = 'tender-for-woocommerce';
/** i18n function → positions (0-based) of its translatable arguments and of its domain. */
const TENDER_I18N_FUNCTIONS = array(
	'__'         => array( array( 0 ), 1 ),
	'_e'         => array( array( 0 ), 1 ),
	'esc_html__' => array( array( 0 ), 1 ),
	'esc_html_e' => array( array( 0 ), 1 ),
	'esc_attr__' => array( array( 0 ), 1 ),
	'esc_attr_e' => array( array( 0 ), 1 ),
	'_x'         => array( array( 0 ), 2 ),
	'_n'         => array( array( 0, 1 ), 3 ),
);

/** Prose: two words of letters, once tags and placeholders are gone; not SQL, not an HTTP header. */
function tender_i18n_is_prose( string $text ): bool {
	$bare = preg_replace( array( '/<[^>]*>/', '/%(\d+\$)?[sd]/' ), ' ', $text );
	if ( preg_match( '/\b(SELECT|INSERT|DELETE|CREATE TABLE|DROP TABLE|UPDATE|VALUES|WHERE|PRIMARY KEY|NOT NULL)\b/', $bare ) || preg_match( '/^[A-Z][a-z]+(-[A-Z][a-z]+)+: /', $bare ) ) {
		return false;
	}
	return 1 === preg_match( '/[A-Za-z]{2,}[.,:;!?\'"]*\s+[A-Za-z(]{2,}/', $bare );
}

/**
 * Walks one PHP file's tokens: [entries, problems]. An entry is [msgid, line, comment]; a problem
 * "line: text".
 */
function tender_i18n_php( string $source ): array {
	$tokens   = token_get_all( $source );
	$calls    = array();   // open parentheses: [function name or '', argument index]
	$entries  = array();
	$problems = array();
	$comment  = array( '', 0 );
	$previous = '';
	$exempt   = array();
	foreach ( $tokens as $token ) {
		if ( is_array( $token ) && in_array( $token[0], array( T_COMMENT, T_DOC_COMMENT ), true ) && str_contains( $token[1], 'no-i18n' ) ) {
			$exempt[ $token[2] ] = true;
		}
	}
	foreach ( $tokens as $token ) {
		if ( is_array( $token ) ) {
			[ $kind, $text, $line ] = $token;
			if ( T_COMMENT === $kind && str_contains( $text, 'translators:' ) ) {
				$comment = array( trim( preg_replace( '#^/\*+|\*+/$|^//#', '', $text ) ), $line );
			}
			if ( T_CONSTANT_ENCAPSED_STRING === $kind ) {
				$value = tender_i18n_unquote( $text );
				$call  = end( $calls ) ?: array( '', 0 );
				$spec  = TENDER_I18N_FUNCTIONS[ $call[0] ] ?? null;
				if ( null !== $spec && in_array( $call[1], $spec[0], true ) ) {
					$note      = $line - $comment[1] <= 2 ? $comment[0] : '';
					$entries[] = array( $value, $line, $note );
				} elseif ( null !== $spec && $call[1] === $spec[1] ) {
					if ( TENDER_I18N_DOMAIN !== $value ) {
						$problems[] = "$line: text domain '$value' is not '" . TENDER_I18N_DOMAIN . "'";
					}
				} elseif ( ! isset( $exempt[ $line ] ) && tender_i18n_is_prose( $value ) ) {
					$problems[] = "$line: $value";
				}
			}
			if ( T_ENCAPSED_AND_WHITESPACE === $kind && ! isset( $exempt[ $line ] ) && tender_i18n_is_prose( $text ) ) {
				$problems[] = "$line: $text";
			}
			if ( ! in_array( $kind, array( T_WHITESPACE, T_COMMENT, T_DOC_COMMENT ), true ) ) {
				$previous = T_STRING === $kind ? $text : '';
			}
			continue;
		}
		if ( '(' === $token ) {
			$calls[] = array( $previous, 0 );
		} elseif ( ')' === $token ) {
			array_pop( $calls );
		} elseif ( ',' === $token && $calls ) {
			++$calls[ count( $calls ) - 1 ][1];
		} elseif ( '[' === $token ) {
			$calls[] = array( '', 0 );
		} elseif ( ']' === $token ) {
			array_pop( $calls );
		}
		$previous = '';
	}
	return array( $entries, $problems );
}

function tender_i18n_unquote( string $literal ): string {
	$quote = $literal[0];
	$body  = substr( $literal, 1, -1 );
	if ( "'" === $quote ) {
		return str_replace( array( "\\\\", "\\'" ), array( "\\", "'" ), $body );
	}
	return stripcslashes( $body );
}

/** wp.i18n calls in a script: __( 'text', 'domain' ); other prose literals are problems. */
function tender_i18n_js( string $source ): array {
	$entries  = array();
	$problems = array();
	$code     = preg_replace_callback( '#/\*.*?\*/|//[^\n]*#s', static fn ( $m ) => preg_replace( '/[^\n]/', ' ', $m[0] ), $source );
	preg_match_all( "/'((?:[^'\\\\]|\\\\.)*)'/", $code, $found, PREG_OFFSET_CAPTURE );
	foreach ( $found[1] as [ $raw, $offset ] ) {
		$line   = substr_count( substr( $code, 0, $offset ), "\n" ) + 1;
		$value  = str_replace( "\\'", "'", $raw );
		$before = rtrim( substr( $code, 0, $offset - 1 ) );
		if ( preg_match( '/\b__\(\s*$/', $before ) ) {
			$entries[] = array( $value, $line, '' );
		} elseif ( tender_i18n_is_prose( $value ) ) {
			$problems[] = "$line: $value";
		}
	}
	preg_match_all( "/__\(\s*'(?:[^'\\\\]|\\\\.)*'\s*,\s*'([^']*)'/", $code, $domains );
	foreach ( $domains[1] as $domain ) {
		if ( TENDER_I18N_DOMAIN !== $domain ) {
			$problems[] = "text domain '$domain' is not '" . TENDER_I18N_DOMAIN . "'";
		}
	}
	return array( $entries, $problems );
}

/** [the .pot text, problems as "file:line: text"] for a plugin folder. */
function tender_i18n_scan( string $plugin_dir ): array {
	$files = array();
	foreach ( new RecursiveIteratorIterator( new RecursiveDirectoryIterator( $plugin_dir, FilesystemIterator::SKIP_DOTS ) ) as $file ) {
		if ( in_array( $file->getExtension(), array( 'php', 'js' ), true ) ) {
			$files[] = substr( $file->getPathname(), strlen( rtrim( $plugin_dir, '/' ) ) + 1 );
		}
	}
	sort( $files );
	$messages = array();   // msgid → [references, comments]
	$problems = array();
	foreach ( $files as $relative ) {
		$source = (string) file_get_contents( "$plugin_dir/$relative" );
		[ $entries, $found ] = str_ends_with( $relative, '.js' ) ? tender_i18n_js( $source ) : tender_i18n_php( $source );
		foreach ( $found as $problem ) {
			$problems[] = "$relative:$problem";
		}
		foreach ( $entries as [ $msgid, $line, $comment ] ) {
			$messages[ $msgid ] ??= array( array(), array() );
			$messages[ $msgid ][0][] = "$relative:$line";
			if ( '' !== $comment ) {
				$messages[ $msgid ][1][ $comment ] = true;
			}
		}
	}
	return array( tender_i18n_pot( $plugin_dir, $messages ), $problems );
}

function tender_i18n_po_string( string $text ): string {
	return '"' . addcslashes( $text, "\"\\\n\t" ) . '"';
}

function tender_i18n_pot( string $plugin_dir, array $messages ): string {
	preg_match( '/^\s*\*\s*Version:\s*(\S+)/m', (string) file_get_contents( "$plugin_dir/tender-for-woocommerce.php" ), $version );
	$out = array(
		'# Translation template of Tender for WooCommerce (made by plugins/woocommerce/tools/make-pot.php; do not edit).',
		'# This file is distributed under the same license as the plugin (MIT).',
		'msgid ""',
		'msgstr ""',
		'"Project-Id-Version: Tender for WooCommerce ' . ( $version[1] ?? '' ) . '\n"',
		'"MIME-Version: 1.0\n"',
		'"Content-Type: text/plain; charset=UTF-8\n"',
		'"Content-Transfer-Encoding: 8bit\n"',
		'"X-Domain: ' . TENDER_I18N_DOMAIN . '\n"',
		'',
	);
	foreach ( $messages as $msgid => [ $references, $comments ] ) {
		foreach ( array_keys( $comments ) as $comment ) {
			$out[] = '#. ' . $comment;
		}
		$out[] = '#: ' . implode( ' ', $references );
		if ( preg_match( '/%(\d+\$)?[sd]/', (string) $msgid ) ) {
			$out[] = '#, php-format';
		}
		$out[] = 'msgid ' . tender_i18n_po_string( (string) $msgid );
		$out[] = 'msgstr ""';
		$out[] = '';
	}
	return implode( "\n", $out );
}

if ( PHP_SAPI === 'cli' && realpath( $argv[0] ?? '' ) === __FILE__ ) {
	$plugin_dir          = rtrim( $argv[1] ?? '', '/' );
	[ $pot, $problems ] = tender_i18n_scan( $plugin_dir );
	$target             = "$plugin_dir/languages/" . TENDER_I18N_DOMAIN . '.pot';
	if ( in_array( '--check', $argv, true ) ) {
		$stale = ! is_file( $target ) || file_get_contents( $target ) !== $pot;
		foreach ( $problems as $problem ) {
			fwrite( STDERR, "not translatable: $problem\n" );
		}
		if ( $stale ) {
			fwrite( STDERR, "$target is not current: run make woocommerce-pot\n" );
		}
		exit( $problems || $stale ? 1 : 0 );
	}
	if ( ! is_dir( dirname( $target ) ) ) {
		mkdir( dirname( $target ), 0755, true );
	}
	file_put_contents( $target, $pot );
	foreach ( $problems as $problem ) {
		fwrite( STDERR, "not translatable: $problem\n" );
	}
	exit( $problems ? 1 : 0 );
}
