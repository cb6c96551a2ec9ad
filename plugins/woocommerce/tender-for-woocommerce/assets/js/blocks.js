/* Tender in the Checkout block: a label and the description. Placing the order runs the gateway's
 * process_payment on the server, which answers with Tender's hosted checkout as the redirect.
 * Texts go through wp.i18n with the plugin's text domain (translations from languages/). */
( function () {
	var wc = window.wc || {};
	if ( ! wc.wcBlocksRegistry || ! wc.wcSettings || ! window.wp || ! window.wp.element ) {
		return;
	}
	var i18n = window.wp.i18n || { __: function ( text ) { return text; } };
	var el = window.wp.element.createElement;
	var data = wc.wcSettings.getSetting( 'tender_data', {} );
	var title = data.title || i18n.__( 'Crypto (Tender)', 'tender-for-woocommerce' );
	var content = function () {
		return el( 'div', null, data.description || i18n.__( 'Pay with crypto on Tender\'s secure checkout page.', 'tender-for-woocommerce' ) );
	};
	wc.wcBlocksRegistry.registerPaymentMethod( {
		name: 'tender',
		label: el( 'span', null, title ),
		ariaLabel: title,
		content: el( content ),
		edit: el( content ),
		canMakePayment: function () {
			return true;
		},
		supports: { features: data.supports || [ 'products' ] }
	} );
} )();
