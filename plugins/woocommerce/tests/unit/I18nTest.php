<?php
/**
 * Every text a person reads goes through WordPress's i18n with the plugin's text domain, and the
 * committed .pot is the one the sources make (`make woocommerce-pot` after changing a string).
 */

use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/../../tools/make-pot.php';

final class I18nTest extends TestCase {
	public function test_no_text_is_shown_without_i18n_and_the_pot_is_current(): void {
		[ $pot, $problems ] = tender_i18n_scan( TENDER_PLUGIN_DIR );
		$this->assertSame( array(), $problems );
		$this->assertSame( file_get_contents( TENDER_PLUGIN_DIR . '/languages/tender-for-woocommerce.pot' ), $pot, 'run make woocommerce-pot' );
		$this->assertStringContainsString( "msgid \"Check payment status\"\n", $pot );
		$this->assertStringContainsString( "#: assets/js/blocks.js:", $pot );
	}

	public function test_a_new_bare_string_or_another_domain_is_caught(): void {
		$source = "<?php\n\$order->add_order_note( 'Tender: something happened.' );\necho esc_html__( 'Fine', 'tender-for-woocommerce' );\n"
			. "echo __( 'Other domain', 'woocommerce' );\nthrow new Tender_Rejected( 401, 'signature does not match' ); // no-i18n: protocol\n"
			. "/* translators: %s: a name. */\n\$t = sprintf( __( 'Hello %s', 'tender-for-woocommerce' ), \$n );\n";
		[ $entries, $problems ] = tender_i18n_php( $source );
		$this->assertSame( array( "2: Tender: something happened.", "4: text domain 'woocommerce' is not 'tender-for-woocommerce'" ), $problems );
		$this->assertSame( array( array( 'Fine', 3, '' ), array( 'Other domain', 4, '' ), array( 'Hello %s', 7, 'translators: %s: a name.' ) ), $entries );
		[ , $js_problems ] = tender_i18n_js( "var a = 'Pay with crypto now';\nvar b = __( 'Fine text', 'tender-for-woocommerce' );" );
		$this->assertSame( array( '1: Pay with crypto now' ), $js_problems );
	}
}
