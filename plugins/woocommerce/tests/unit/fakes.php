<?php
/**
 * Test doubles for what lies outside the plugin: Tender's HTTP answers (a scripted transport that
 * records every request) and a WooCommerce order (only the methods the plugin calls).
 */

final class Scripted_Transport {
	/** @var array<int, array{method:string,url:string,headers:array,body:?string}> */
	public array $requests = array();

	/** @param array<int, array{0:int,1:string|array}> $answers in order; an array body is JSON-encoded */
	public function __construct( private array $answers = array() ) {
	}

	public function then( int $status, string|array $body ): self {
		$this->answers[] = array( $status, $body );
		return $this;
	}

	public function __invoke( string $method, string $url, array $headers, ?string $body ): array {
		$this->requests[] = compact( 'method', 'url', 'headers', 'body' );
		if ( ! $this->answers ) {
			throw new LogicException( "no scripted answer for $method $url" );
		}
		[ $status, $answer ] = array_shift( $this->answers );
		return array( $status, is_array( $answer ) ? json_encode( $answer ) : $answer );
	}

	public function api( string $key = 'sk_live_dedicated' ): Tender_Api {
		return new Tender_Api( 'https://tender.test', $key, $this );
	}

	public function paths(): array {
		return array_map( static fn ( $r ) => $r['method'] . ' ' . substr( $r['url'], strlen( 'https://tender.test' ) ), $this->requests );
	}
}

final class Fake_Order {
	public array $meta = array();
	public array $notes = array();
	public int $payment_complete_calls = 0;
	public int $saves = 0;
	public string $transaction_id = '';

	public function __construct( private int $id = 1001, public string $status = 'pending', private string $total = '25.00', private string $currency = 'USD', private string $key = 'wc_order_abc', public string $payment_method = 'tender' ) {
	}

	public function get_payment_method( $context = 'view' ) {
		return $this->payment_method;
	}

	public function get_id() {
		return $this->id;
	}

	public function get_total( $context = 'view' ) {
		return $this->total;
	}

	public function get_currency( $context = 'view' ) {
		return $this->currency;
	}

	public function get_order_key( $context = 'view' ) {
		return $this->key;
	}

	public function get_status( $context = 'view' ) {
		return $this->status;
	}

	public function is_paid() {
		return in_array( $this->status, array( 'processing', 'completed' ), true );
	}

	public function get_meta( $key = '', $single = true, $context = 'view' ) {
		return $this->meta[ $key ] ?? '';
	}

	public function update_meta_data( $key, $value, $meta_id = 0 ) {
		$this->meta[ $key ] = $value;
	}

	public function save() {
		++$this->saves;
		return $this->id;
	}

	public function add_order_note( $note, $is_customer_note = 0, $added_by_user = false ) {
		$this->notes[] = $note;
		return count( $this->notes );
	}

	public function update_status( $new_status, $note = '', $manual = false ) {
		$this->status = $new_status;
		if ( '' !== $note ) {
			$this->notes[] = $note;
		}
		return true;
	}

	public function payment_complete( $transaction_id = '' ) {
		++$this->payment_complete_calls;
		$this->transaction_id = $transaction_id;
		$this->status         = 'processing';
		return true;
	}
}

final class Memory_Seen_Store implements Tender_Seen_Store {
	public array $seen = array();

	public function claim( string $event_id ): bool {
		if ( isset( $this->seen[ $event_id ] ) ) {
			return false;
		}
		$this->seen[ $event_id ] = true;
		return true;
	}

	public function release( string $event_id ): void {
		unset( $this->seen[ $event_id ] );
	}
}
