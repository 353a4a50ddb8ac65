/** JMH benchmarks of cosched's runtime against the executors and timers users would pick instead. */
package io.cosched.bench;
