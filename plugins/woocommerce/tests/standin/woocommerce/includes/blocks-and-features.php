<?php
/**
 * FeaturesUtil::declare_compatibility and the Blocks payment method registry: signatures as
 * WooCommerce's.
 *
 * @package TenderTests
 */

namespace Automattic\WooCommerce\Utilities {
	final class FeaturesUtil {
		/** @var array<string, array<string, bool>> feature id => plugin => compatible */
		public static array $declared = array();

		/**
		 * Declare (in)compatibility with a given feature for a given plugin; only inside a
		 * before_woocommerce_init handler, as WooCommerce requires.
		 */
		public static function declare_compatibility( string $feature_id, string $plugin_file, bool $positive_compatibility = true ): bool {
			if ( ! \WC_Features::$declaring ) {
				_doing_it_wrong( __METHOD__, 'FeaturesUtil::declare_compatibility must be called inside the before_woocommerce_init action.', '7.0' );
				return false;
			}
			$plugin_id = plugin_basename( $plugin_file );
			self::$declared[ $feature_id ][ $plugin_id ] = $positive_compatibility;
			return true;
		}

		public static function get_compatible_plugins_for_feature( string $feature_id ): array {
			$plugins = self::$declared[ $feature_id ] ?? array();
			return array(
				'compatible'   => array_keys( array_filter( $plugins ) ),
				'incompatible' => array_keys( array_filter( $plugins, static fn ( $ok ) => ! $ok ) ),
			);
		}
	}
}

namespace Automattic\WooCommerce\Blocks\Payments\Integrations {
	abstract class AbstractPaymentMethodType {
		protected $name = '';
		protected $settings = array();

		abstract public function initialize();

		protected function get_setting( $name, $default = '' ) {
			return isset( $this->settings[ $name ] ) ? $this->settings[ $name ] : $default;
		}

		public function get_name() {
			return $this->name;
		}

		public function is_active() {
			return true;
		}

		public function get_payment_method_script_handles() {
			return array();
		}

		public function get_payment_method_script_handles_for_admin() {
			return $this->get_payment_method_script_handles();
		}

		public function get_supported_features() {
			return array( 'products' );
		}

		public function get_payment_method_data() {
			return array();
		}
	}
}

namespace Automattic\WooCommerce\Blocks\Payments {
	use Automattic\WooCommerce\Blocks\Payments\Integrations\AbstractPaymentMethodType;

	final class PaymentMethodRegistry {
		protected $registry_identifier = 'payment_method_type';
		private array $registered_integrations = array();
		private static ?PaymentMethodRegistry $instance = null;

		public static function instance(): self {
			return self::$instance ??= new self();
		}

		/** IntegrationRegistry::initialize: the registration action, then every integration's initialize(). */
		public function initialize( $registry_identifier = '' ) {
			do_action( 'woocommerce_blocks_' . $this->registry_identifier . '_registration', $this );
			foreach ( $this->registered_integrations as $integration ) {
				$integration->initialize();
			}
		}

		public function register( $integration ) {
			if ( ! $integration instanceof AbstractPaymentMethodType ) {
				return false;
			}
			$name = $integration->get_name();
			if ( isset( $this->registered_integrations[ $name ] ) ) {
				return false;
			}
			$this->registered_integrations[ $name ] = $integration;
			return true;
		}

		public function get_all_registered() {
			return $this->registered_integrations;
		}

		public function get_all_active_registered() {
			return array_filter( $this->registered_integrations, static fn ( $payment_method ) => $payment_method->is_active() );
		}

		public function get_all_registered_script_data() {
			$script_data = array();
			foreach ( $this->get_all_active_registered() as $payment_method ) {
				$script_data[ $payment_method->get_name() ] = $payment_method->get_payment_method_data();
			}
			return array( 'paymentMethodData' => array_filter( $script_data ) );
		}
	}
}

namespace {
	/** Whether declare_compatibility is being called at the time WooCommerce allows it. */
	final class WC_Features {
		public static bool $declaring = true;
	}
}
