/* Tender in the Checkout block: a label and the description. Placing the order runs the gateway's
 * process_payment on the server, which answers with Tender's hosted checkout as the redirect. */
( function () {
	var wc = window.wc || {};
	if ( ! wc.wcBlocksRegistry || ! wc.wcSettings || ! window.wp || ! window.wp.element ) {
		return;
	}
	var el = window.wp.element.createElement;
	var data = wc.wcSettings.getSetting( 'tender_data', {} );
	var title = data.title || 'Crypto (Tender)';
	var content = function () {
		return el( 'div', null, data.description || '' );
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
