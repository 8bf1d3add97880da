import Glibc

// Foundation's NSLock, NSCondition and Thread are pthread calls on Linux; the core makes its own so that it links no
// Foundation. pthread locks, not Synchronization's Mutex: the plugin tests' call counter sees them, so one taken in
// an audio callback fails the tests.

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

/// A mutex and a condition variable waited on with it held.
package final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() {
        pthread_mutex_lock(mutex)
    }

    package func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Releases the lock until signalled, then takes it again; callers wait in a loop on their own condition.
    package func wait() {
        pthread_cond_wait(condition, mutex)
    }

    package func signal() {
        pthread_cond_signal(condition)
    }

    package func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// Runs `body` on a new thread of its own, detached. (Unnamed: Glibc's module leaves out pthread_setname_np.)
package func startThread(_ body: @escaping @Sendable () -> Void) {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { context in
        Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    guard status == 0 else {
        fatalError("could not start a thread: \(String(cString: strerror(status)))")
    }
    pthread_detach(thread)
}

private final class ThreadBody {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}
