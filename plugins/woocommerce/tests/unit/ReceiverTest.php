<?php
/**
 * Receiver rules 4-6, on the vectors the Python kit is tested with (kit/tender_receiver_vectors.json).
 */

use PHPUnit\Framework\TestCase;

final class ReceiverTest extends TestCase {
	private static function vectors(): array {
		return json_decode( file_get_contents( TENDER_VECTORS ), true, 512, JSON_THROW_ON_ERROR );
	}

	public function test_the_documented_signature(): void {
		$v = self::vectors();
		$this->assertSame( $v['expected_signature'], 'v1=' . Tender_Receiver::sign( $v['webhook_secret'], $v['timestamp'], $v['body'] ) );
		$this->assertSame( 'v1=0e7ac3af96a81afe85b898eb64f2027f54d6705531bead79171c7317f1b3f62b', $v['expected_signature'] );
	}

	public static function cases(): array {
		$named = array();
		foreach ( self::vectors()['cases'] as $case ) {
			$named[ $case['name'] ] = array( $case );
		}
		return $named;
	}

	/** @dataProvider cases */
	public function test_shared_vector( array $case ): void {
		$v = self::vectors();
		try {
			$event = Tender_Receiver::verify( $case['headers'], $case['body'], $v['webhook_secret'], $v['integration_id'], $case['now'] );
			$this->assertSame( 200, $case['status'], 'verified, but the vector says ' . ( $case['reason'] ?? '' ) );
			$this->assertSame( 'evt_00000000000000000000000000000001', $event['id'] );
		} catch ( Tender_Rejected $refused ) {
			$this->assertSame( array( $case['status'], $case['reason'] ?? null ), array( $refused->status, $refused->getMessage() ) );
		}
	}

	public function test_not_connected_refuses_everything(): void {
		$v = self::vectors();
		$headers = $v['cases'][0]['headers'];
		$this->expectExceptionObject( new Tender_Rejected( 401, 'signature does not match' ) );
		Tender_Receiver::verify( $headers, $v['body'], '', '', $v['timestamp'] );
	}

	private function receiver( callable $on_event, Memory_Seen_Store $seen ): Tender_Receiver {
		$v = self::vectors();
		return new Tender_Receiver( $v['webhook_secret'], $v['integration_id'], $on_event, $seen, static fn () => $v['timestamp'] );
	}

	public function test_the_action_runs_once_per_event_id(): void {
		$v     = self::vectors();
		$acted = array();
		$seen  = new Memory_Seen_Store();
		$receiver = $this->receiver( static function ( array $event ) use ( &$acted ) { $acted[] = $event['id']; }, $seen );
		$headers  = $v['cases'][0]['headers'];
		$this->assertSame( array( 200, array( 'received' => true ) ), $receiver->handle( $headers, $v['body'] ) );
		$this->assertSame( array( 200, array( 'duplicate' => true ) ), $receiver->handle( $headers, $v['body'] ) );
		$this->assertSame( '{"duplicate":true}', json_encode( $receiver->handle( $headers, $v['body'] )[1] ) );
		$this->assertSame( array( 'evt_00000000000000000000000000000001' ), $acted );
	}

	public function test_a_refused_delivery_claims_nothing(): void {
		$v    = self::vectors();
		$seen = new Memory_Seen_Store();
		$receiver = $this->receiver( static function () { throw new LogicException( 'must not run' ); }, $seen );
		$forged   = array_merge( $v['cases'][0]['headers'], array( 'X-Tender-Signature' => 'v1=' . str_repeat( '0', 64 ) ) );
		$this->assertSame( 401, $receiver->handle( $forged, $v['body'] )[0] );
		$this->assertSame( array(), $seen->seen );
	}

	public function test_a_failed_action_is_retried_not_lost(): void {
		$v     = self::vectors();
		$calls = 0;
		$receiver = $this->receiver(
			static function () use ( &$calls ) {
				if ( 1 === ++$calls ) {
					throw new RuntimeException( 'Tender unreachable' );
				}
			},
			new Memory_Seen_Store()
		);
		$headers = $v['cases'][0]['headers'];
		$this->assertSame( 500, $receiver->handle( $headers, $v['body'] )[0] );
		$this->assertSame( array( 200, array( 'received' => true ) ), $receiver->handle( $headers, $v['body'] ) );
		$this->assertSame( array( 200, array( 'duplicate' => true ) ), $receiver->handle( $headers, $v['body'] ) );
		$this->assertSame( 2, $calls );
	}
}
