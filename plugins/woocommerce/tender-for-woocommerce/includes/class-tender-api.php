<?php
/**
 * Tender's HTTP API as the plugin uses it. Keys travel only in the Authorization header, never in
 * a URL, and nothing here logs a request or an answer.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

/**
 * An answer from Tender that the caller did not expect, or no answer at all (status 0).
 */
class Tender_Api_Error extends RuntimeException {
	/**
	 * @param int    $status HTTP status, 0 when no answer arrived (a timeout, a refused connection).
	 * @param string $code   Tender's error code (`payout_wallet_not_configured`, …), or '' when none.
	 * @param string $text   What happened, safe to show to the shop's administrator.
	 * @param array  $body   The decoded answer, for the details some errors carry.
	 */
	public function __construct( public readonly int $status, public readonly string $error_code, string $text, public readonly array $body = array() ) {
		parent::__construct( $text );
	}

	/** True when Tender may have acted without us hearing its answer (a retry must be safe). */
	public function answer_lost(): bool {
		return 0 === $this->status || $this->status >= 500;
	}
}

/**
 * One Tender API client for one key.
 */
class Tender_Api {
	public const TIMEOUT_SECONDS = 15;

	/** @var callable(string, string, array, ?string): array{0:int,1:string} */
	private $transport;

	/**
	 * @param string        $base_url  Tender's API address, e.g. https://pay.example.com.
	 * @param string        $api_key   The bootstrap or the dedicated key.
	 * @param callable|null $transport (method, url, headers, body) → [status, body]; status 0 when
	 *                                 no answer arrived. WordPress's HTTP API when null.
	 */
	public function __construct( private string $base_url, private string $api_key, ?callable $transport = null ) {
		$this->base_url  = rtrim( $base_url, '/' );
		$this->transport = $transport ?? array( self::class, 'wordpress_transport' );
	}

	public function connect( array $body ): array {
		return $this->request( 'POST', '/v1/integration/woocommerce/connect', $body );
	}

	public function status(): array {
		return $this->request( 'GET', '/v1/integration/woocommerce/status' );
	}

	public function disconnect(): array {
		return $this->request( 'POST', '/v1/integration/woocommerce/disconnect', array() );
	}

	public function create_invoice( array $body, string $idempotency_key ): array {
		return $this->request( 'POST', '/v1/invoices', $body, $idempotency_key );
	}

	public function get_invoice( string $invoice_id ): array {
		return $this->request( 'GET', '/v1/invoices/' . rawurlencode( $invoice_id ) );
	}

	public function create_refund( string $invoice_id, array $body, string $idempotency_key ): array {
		return $this->request( 'POST', '/v1/invoices/' . rawurlencode( $invoice_id ) . '/refunds', $body, $idempotency_key );
	}

	/** Does this Tender answer the refunds API for this key? (Older servers: 404.) */
	public function refunds_available(): bool {
		try {
			$this->request( 'GET', '/v1/refunds?limit=1' );
			return true;
		} catch ( Tender_Api_Error $error ) {
			return false;
		}
	}

	/**
	 * The decoded 2xx answer, or Tender_Api_Error.
	 */
	public function request( string $method, string $path, ?array $body = null, ?string $idempotency_key = null ): array {
		$headers = array(
			'Authorization' => 'Bearer ' . $this->api_key,
			'Accept'        => 'application/json',
			'User-Agent'    => 'TenderForWooCommerce/' . ( defined( 'TENDER_PLUGIN_VERSION' ) ? TENDER_PLUGIN_VERSION : 'dev' ),
		);
		$payload = null;
		if ( null !== $body ) {
			$headers['Content-Type'] = 'application/json';
			$payload                 = (string) wp_json_encode( (object) $body, JSON_UNESCAPED_SLASHES );
		}
		if ( null !== $idempotency_key ) {
			$headers['Idempotency-Key'] = $idempotency_key;
		}
		[ $status, $raw ] = ( $this->transport )( $method, $this->base_url . $path, $headers, $payload );
		$status           = (int) $status;
		if ( 0 === $status ) {
			/* translators: %s: why no answer arrived (a timeout, a refused connection). */
			throw new Tender_Api_Error( 0, '', sprintf( __( 'Tender did not answer (%s).', 'tender-for-woocommerce' ), (string) $raw ) );
		}
		$answer = json_decode( (string) $raw, true );
		$answer = is_array( $answer ) ? $answer : array();
		if ( $status >= 200 && $status < 300 ) {
			return $answer;
		}
		[ $code, $message ] = self::describe_error( $answer );
		/* translators: 1: HTTP status, 2: Tender's error code and message. */
		$text = sprintf( __( 'Tender answered %1$d%2$s', 'tender-for-woocommerce' ), $status, ( '' !== $code ? " $code" : '' ) . ( '' !== $message ? ": $message" : '.' ) );
		throw new Tender_Api_Error( $status, $code, $text, $answer );
	}

	/**
	 * [code, message] from either of Tender's error shapes: the standard
	 * {"error": {"code", "message"}} and the legacy {"error": "message", "code": "…"}.
	 */
	public static function describe_error( array $answer ): array {
		$error = $answer['error'] ?? null;
		if ( is_array( $error ) ) {
			return array( (string) ( $error['code'] ?? '' ), (string) ( $error['message'] ?? '' ) );
		}
		return array( (string) ( $answer['code'] ?? '' ), is_string( $error ) ? $error : '' );
	}

	/**
	 * WordPress's HTTP API (any transport it has). Redirects are not followed: a key is never
	 * sent on to another address.
	 */
	public static function wordpress_transport( string $method, string $url, array $headers, ?string $body ): array {
		$response = wp_remote_request(
			$url,
			array(
				'method'      => $method,
				'headers'     => $headers,
				'body'        => $body,
				'timeout'     => self::TIMEOUT_SECONDS,
				'redirection' => 0,
			)
		);
		if ( is_wp_error( $response ) ) {
			return array( 0, $response->get_error_message() );
		}
		return array( (int) wp_remote_retrieve_response_code( $response ), (string) wp_remote_retrieve_body( $response ) );
	}
}
