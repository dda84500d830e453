package io.github.distlock.etcd;

/**
 * An etcd request failed or did not answer in time. Checked, so that every caller decides whether
 * to retry, clean up or report.
 */
final class EtcdCallFailedException extends Exception {

    private static final long serialVersionUID = 1L;

    EtcdCallFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
