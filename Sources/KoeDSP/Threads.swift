import Glibc

// Foundation's NSLock is a pthread mutex on Linux; the core makes its own so that it links no Foundation. A pthread
// lock, not Synchronization's Mutex: the plugin tests' call counter sees it, so one taken in an audio callback fails
// the tests.

/// A mutex.
package final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() {
        pthread_mutex_lock(mutex)
    }

    package func unlock() {
        pthread_mutex_unlock(mutex)
    }
}
