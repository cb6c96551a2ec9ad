<?php
/**
 * WooCommerce's payment-method base classes as far as Tender_Gateway::is_available and the
 * Checkout block's is_active use them: settings from the gateway's option, and WooCommerce's own
 * rule that a gateway is available when it is enabled.
 */

namespace Automattic\WooCommerce\Blocks\Payments\Integrations {
	abstract class AbstractPaymentMethodType {
		protected $name     = '';
		protected $settings = array();

		protected function get_setting( $name, $default_value = '' ) {
			return $this->settings[ $name ] ?? $default_value;
		}
	}
}

namespace {
	function is_admin() {
		return false;
	}

	function add_action( $hook, $callback, $priority = 10, $accepted_args = 1 ) {
		return true;
	}

	abstract class WC_Payment_Gateway {
		public $id       = '';
		public $enabled  = 'no';
		public $settings = array();
		public $supports = array();

		public function init_settings() {
			$settings       = get_option( 'woocommerce_' . $this->id . '_settings', array() );
			$this->settings = is_array( $settings ) ? $settings : array();
			$this->enabled  = $this->settings['enabled'] ?? 'no';
		}

		public function get_option( $key, $empty_value = null ) {
			return $this->settings[ $key ] ?? ( $this->form_fields[ $key ]['default'] ?? $empty_value );
		}

		public function is_available() {
			return 'yes' === $this->enabled;
		}
	}

	require_once TENDER_PLUGIN_DIR . '/includes/class-tender-gateway.php';
	require_once TENDER_PLUGIN_DIR . '/includes/class-tender-blocks.php';
}
