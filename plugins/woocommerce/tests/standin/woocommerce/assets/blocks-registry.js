/* The stand-in's wc.wcBlocksRegistry and wc.wcSettings: registerPaymentMethod keeps each method's
 * configuration (as @woocommerce/blocks-registry does), getSetting reads the page's settings
 * (WooCommerce prints them as wcSettings; a payment method's data is "<name>_data"). */
( function () {
	window.wc = window.wc || {};
	var registered = {};
	window.wc.wcBlocksRegistry = {
		registerPaymentMethod: function ( config ) {
			registered[ config.name ] = config;
		},
		getPaymentMethods: function () {
			return registered;
		}
	};
	window.wc.wcSettings = {
		getSetting: function ( name, fallback ) {
			var settings = window.wcStandinSettings || {};
			return Object.prototype.hasOwnProperty.call( settings, name ) ? settings[ name ] : fallback;
		}
	};
} )();
