<?php
/**
 * `php -S` router for a test WordPress whose docroot links to Debian's WordPress files
 * (/usr/share/wordpress) beside its own wp-config.php and wp-content. ABSPATH is the docroot, so
 * WordPress loads this site's wp-config.php, not Debian's (which reads /etc/wordpress).
 * Top-level code only: WordPress's files must run in the global scope.
 */

$tender_root = rtrim( $_SERVER['DOCUMENT_ROOT'], '/' );
define( 'ABSPATH', $tender_root . '/' );
$tender_path = rawurldecode( (string) parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
if ( str_contains( $tender_path, '..' ) ) {
	http_response_code( 400 );
	return;
}
if ( is_dir( $tender_root . $tender_path ) ) {
	$tender_path = rtrim( $tender_path, '/' ) . '/index.php';
}
if ( is_file( $tender_root . $tender_path ) && ! str_ends_with( $tender_path, '.php' ) ) {
	return false;   // a static file: the built-in server sends it
}
if ( ! is_file( $tender_root . $tender_path ) ) {
	$tender_path = '/index.php';   // pretty URLs and the REST API go through WordPress's front controller
}
$_SERVER['SCRIPT_NAME']     = $tender_path;
$_SERVER['PHP_SELF']        = $tender_path;
$_SERVER['SCRIPT_FILENAME'] = $tender_root . $tender_path;
chdir( dirname( $tender_root . $tender_path ) );
require $tender_root . $tender_path;
