/* The stand-in's Checkout block: each registered payment method's label and content rendered with
 * wp.element (React), a radio to choose it, and "Place order", which posts the Store API checkout
 * and follows its redirect_url, as the Checkout block does. */
( function () {
	var el = window.wp.element.createElement;
	var methods = window.wc.wcBlocksRegistry.getPaymentMethods();
	var root = document.getElementById( 'standin-checkout-block' );
	var chosen = { name: null };
	function Checkout() {
		var options = Object.keys( methods ).filter( function ( name ) {
			return methods[ name ].canMakePayment( {} );
		} ).map( function ( name ) {
			var method = methods[ name ];
			return el( 'label', { key: name, className: 'standin-payment-method', 'data-method': name },
				el( 'input', { type: 'radio', name: 'radio-control-wc-payment-method-options', value: name,
					id: 'radio-control-wc-payment-method-options-' + name, 'aria-label': method.ariaLabel,
					onChange: function () { chosen.name = name; } } ),
				method.label, el( 'div', { className: 'standin-method-content' }, method.content ) );
		} );
		return el( 'form', { id: 'standin-checkout', onSubmit: function ( event ) {
			event.preventDefault();
			var notice = document.getElementById( 'standin-notice' );
			window.fetch( root.dataset.checkoutUrl, {
				method: 'POST', headers: { 'Content-Type': 'application/json' },
				body: JSON.stringify( { payment_method: chosen.name, total: root.dataset.total } )
			} ).then( function ( answer ) { return answer.json(); } ).then( function ( placed ) {
				var result = placed.payment_result || {};
				if ( result.payment_status === 'success' && result.redirect_url ) {
					window.location.assign( result.redirect_url );
				} else {
					notice.textContent = ( result.payment_details || [] ).map( function ( d ) { return d.value; } ).join( ' ' ) || placed.message || 'failed';
				}
			} );
		} }, options, el( 'button', { type: 'submit', className: 'wc-block-components-checkout-place-order-button' }, 'Place Order' ) );
	}
	var element = el( Checkout );
	if ( window.wp.element.createRoot ) {
		window.wp.element.createRoot( root ).render( element );
	} else {
		window.wp.element.render( element, root );
	}
} )();
