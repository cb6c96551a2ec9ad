<?php
/**
 * HPOS (custom order tables): the plugin reaches orders only through WooCommerce's order API, never
 * through the posts tables an order may not live in.
 */

use PHPUnit\Framework\TestCase;

final class HposTest extends TestCase {
	private const POST_STORAGE = array( 'get_post_meta', 'update_post_meta', 'add_post_meta', 'delete_post_meta', 'get_post(', 'wp_update_post', 'wp_insert_post', 'WP_Query', 'get_posts(', '->posts', '->postmeta', "'shop_order'" );

	public function test_no_order_is_read_or_written_through_posts(): void {
		$found = array();
		$files = new RecursiveIteratorIterator( new RecursiveDirectoryIterator( TENDER_PLUGIN_DIR, FilesystemIterator::SKIP_DOTS ) );
		foreach ( $files as $file ) {
			if ( 'php' !== $file->getExtension() ) {
				continue;
			}
			$source = file_get_contents( $file->getPathname() );
			foreach ( self::POST_STORAGE as $call ) {
				if ( str_contains( $source, $call ) ) {
					$found[] = basename( $file->getPathname() ) . ": $call";
				}
			}
		}
		$this->assertSame( array(), $found );
	}

	public function test_the_main_file_declares_hpos_and_blocks_compatibility(): void {
		$main = file_get_contents( TENDER_PLUGIN_DIR . '/tender-for-woocommerce.php' );
		$this->assertStringContainsString( "declare_compatibility( 'custom_order_tables', TENDER_PLUGIN_FILE, true )", $main );
		$this->assertStringContainsString( "declare_compatibility( 'cart_checkout_blocks', TENDER_PLUGIN_FILE, true )", $main );
		$this->assertMatchesRegularExpression( '/^ \* Requires PHP: +8\.1$/m', $main );
	}
}
