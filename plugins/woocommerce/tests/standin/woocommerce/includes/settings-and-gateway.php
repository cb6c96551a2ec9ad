<?php
/**
 * WC_Settings_API, WC_Payment_Gateway and WC_Payment_Gateways: signatures as WooCommerce's.
 *
 * @package TenderTests
 */

defined( 'ABSPATH' ) || exit;

abstract class WC_Settings_API {
	public $plugin_id = 'woocommerce_';
	public $id = '';
	public $errors = array();
	public $settings = array();
	public $form_fields = array();
	protected $data = array();

	public function get_form_fields() {
		return apply_filters( 'woocommerce_settings_api_form_fields_' . $this->id, array_map( array( $this, 'set_defaults' ), $this->form_fields ) );
	}

	protected function set_defaults( $field ) {
		if ( ! isset( $field['default'] ) ) {
			$field['default'] = '';
		}
		return $field;
	}

	public function admin_options() {
		echo '<table class="form-table">' . $this->generate_settings_html( $this->get_form_fields(), false ) . '</table>'; // phpcs:ignore
	}

	public function init_form_fields() {}

	public function get_option_key() {
		return $this->plugin_id . $this->id . '_settings';
	}

	public function get_field_type( $field ) {
		return empty( $field['type'] ) ? 'text' : $field['type'];
	}

	public function get_field_default( $field ) {
		return empty( $field['default'] ) ? '' : $field['default'];
	}

	public function get_field_value( $key, $field, $post_data = array() ) {
		$type      = $this->get_field_type( $field );
		$field_key = $this->get_field_key( $key );
		$post_data = empty( $post_data ) ? $_POST : $post_data; // phpcs:ignore
		$value     = isset( $post_data[ $field_key ] ) ? $post_data[ $field_key ] : null;
		if ( 'checkbox' === $type ) {
			return ! is_null( $value ) ? 'yes' : 'no';
		}
		return is_null( $value ) ? '' : trim( wp_unslash( (string) $value ) );
	}

	public function set_post_data( $data = array() ) {
		$this->data = $data;
	}

	public function get_post_data() {
		if ( ! empty( $this->data ) && is_array( $this->data ) ) {
			return $this->data;
		}
		return $_POST; // phpcs:ignore
	}

	public function update_option( $key, $value = '' ) {
		if ( empty( $this->settings ) ) {
			$this->init_settings();
		}
		$this->settings[ $key ] = $value;
		return update_option( $this->get_option_key(), apply_filters( 'woocommerce_settings_api_sanitized_fields_' . $this->id, $this->settings ), 'yes' );
	}

	public function process_admin_options() {
		$this->init_settings();
		$post_data = $this->get_post_data();
		foreach ( $this->get_form_fields() as $key => $field ) {
			if ( 'title' !== $this->get_field_type( $field ) ) {
				try {
					$this->settings[ $key ] = $this->get_field_value( $key, $field, $post_data );
				} catch ( Exception $e ) {
					$this->add_error( $e->getMessage() );
				}
			}
		}
		$option_key = $this->get_option_key();
		do_action( 'woocommerce_update_option', array( 'id' => $option_key ) );
		return update_option( $option_key, apply_filters( 'woocommerce_settings_api_sanitized_fields_' . $this->id, $this->settings ), 'yes' );
	}

	public function add_error( $error ) {
		$this->errors[] = $error;
	}

	public function get_errors() {
		return $this->errors;
	}

	public function init_settings() {
		$this->settings = get_option( $this->get_option_key(), null );
		if ( ! is_array( $this->settings ) ) {
			$form_fields    = $this->get_form_fields();
			$this->settings = array_merge( array_fill_keys( array_keys( $form_fields ), '' ), wp_list_pluck( $form_fields, 'default' ) );
		}
	}

	public function get_field_key( $key ) {
		return $this->plugin_id . $this->id . '_' . $key;
	}

	public function get_option( $key, $empty_value = null ) {
		if ( empty( $this->settings ) ) {
			$this->init_settings();
		}
		if ( ! isset( $this->settings[ $key ] ) ) {
			$form_fields            = $this->get_form_fields();
			$this->settings[ $key ] = isset( $form_fields[ $key ] ) ? $this->get_field_default( $form_fields[ $key ] ) : '';
		}
		if ( ! is_null( $empty_value ) && '' === $this->settings[ $key ] ) {
			$this->settings[ $key ] = $empty_value;
		}
		return $this->settings[ $key ];
	}

	/** Text, password, textarea and checkbox fields: the ones Tender's gateway uses. */
	public function generate_settings_html( $form_fields = array(), $echo = true ) {
		if ( empty( $form_fields ) ) {
			$form_fields = $this->get_form_fields();
		}
		$html = '';
		foreach ( $form_fields as $k => $v ) {
			$type  = $this->get_field_type( $v );
			$key   = esc_attr( $this->get_field_key( $k ) );
			$value = 'password' === $type ? '' : (string) $this->get_option( $k );
			$label = esc_html( $v['title'] ?? $k );
			switch ( $type ) {
				case 'checkbox':
					$input = sprintf( '<label for="%1$s"><input type="checkbox" name="%1$s" id="%1$s" value="1" %2$s /> %3$s</label>', $key, checked( $value, 'yes', false ), esc_html( $v['label'] ?? '' ) );
					break;
				case 'textarea':
					$input = sprintf( '<textarea name="%1$s" id="%1$s">%2$s</textarea>', $key, esc_textarea( $value ) );
					break;
				default:
					$input = sprintf( '<input type="%1$s" name="%2$s" id="%2$s" value="%3$s" autocomplete="off" />', 'password' === $type ? 'password' : 'text', $key, esc_attr( $value ) );
			}
			$html .= sprintf( '<tr><th scope="row"><label for="%s">%s</label></th><td>%s<p class="description">%s</p></td></tr>', $key, $label, $input, wp_kses_post( $v['description'] ?? '' ) );
		}
		if ( $echo ) {
			echo $html; // phpcs:ignore
		}
		return $html;
	}
}

abstract class WC_Payment_Gateway extends WC_Settings_API {
	public $order_button_text;
	public $enabled = 'yes';
	public $title;
	public $description;
	public $chosen;
	public $method_title = '';
	public $method_description = '';
	public $has_fields;
	public $countries;
	public $availability;
	public $icon;
	public $supports = array( 'products' );
	public $max_amount = 0;

	public function get_method_title() {
		return apply_filters( 'woocommerce_gateway_method_title', $this->method_title, $this );
	}

	public function get_method_description() {
		return apply_filters( 'woocommerce_gateway_method_description', $this->method_description, $this );
	}

	public function admin_options() {
		echo '<h2>' . esc_html( $this->get_method_title() ) . '</h2>';
		echo wp_kses_post( wpautop( $this->get_method_description() ) );
		parent::admin_options();
	}

	public function init_settings() {
		parent::init_settings();
		$this->enabled = ! empty( $this->settings['enabled'] ) && 'yes' === $this->settings['enabled'] ? 'yes' : 'no';
	}

	public function needs_setup() {
		return false;
	}

	/**
	 * @param WC_Order|null $order Order object.
	 */
	public function get_return_url( $order = null ) {
		$return_url = $order ? $order->get_checkout_order_received_url() : home_url( '/?order-received=' );
		return apply_filters( 'woocommerce_get_return_url', $return_url, $order );
	}

	public function is_available() {
		return 'yes' === $this->enabled;
	}

	public function has_fields() {
		return (bool) $this->has_fields;
	}

	public function get_title() {
		return apply_filters( 'woocommerce_gateway_title', (string) $this->title, $this->id );
	}

	public function get_description() {
		return apply_filters( 'woocommerce_gateway_description', wp_kses_post( (string) $this->description ), $this->id );
	}

	public function process_payment( $order_id ) {
		return array();
	}

	/**
	 * @param  int        $order_id Order ID.
	 * @param  float|null $amount Refund amount.
	 * @param  string     $reason Refund reason.
	 * @return bool|\WP_Error
	 */
	public function process_refund( $order_id, $amount = null, $reason = '' ) {
		return false;
	}

	public function validate_fields() {
		return true;
	}

	public function payment_fields() {
		$description = $this->get_description();
		if ( $description ) {
			echo wpautop( wptexturize( $description ) ); // phpcs:ignore
		}
	}

	public function supports( $feature ) {
		return apply_filters( 'woocommerce_payment_gateway_supports', in_array( $feature, $this->supports, true ), $feature, $this );
	}

	public function can_refund_order( $order ) {
		return $order && $this->supports( 'refunds' );
	}
}

/** WC_Payment_Gateways: the gateways named by the woocommerce_payment_gateways filter, one instance each. */
final class WC_Payment_Gateways {
	public $payment_gateways = array();

	public function __construct() {
		foreach ( apply_filters( 'woocommerce_payment_gateways', array() ) as $gateway ) {
			$load_gateway = is_string( $gateway ) ? new $gateway() : $gateway;
			$this->payment_gateways[ $load_gateway->id ] = $load_gateway;
		}
	}

	public function payment_gateways() {
		return $this->payment_gateways;
	}

	public function get_available_payment_gateways() {
		return array_filter( $this->payment_gateways, static fn ( $gateway ) => $gateway->is_available() );
	}
}

/** wc_add_notice: notices of this request (WooCommerce keeps them in the session). */
function wc_add_notice( $message, $notice_type = 'success', $data = array() ) {
	$GLOBALS['wc_standin_notices'][] = array(
		'notice' => $message,
		'type'   => $notice_type,
	);
}
