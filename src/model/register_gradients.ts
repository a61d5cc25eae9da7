/**
 * Side-effect import: registers TensorFlow.js's gradient functions (tf.grads / variableGrads).
 * The Node build of @tensorflow/tfjs-core ships no gradients; its ESM sources that would register
 * them use extensionless imports that Node cannot load, and the @tensorflow/tfjs bundle is the
 * packaged way to get them (it shares core's global kernel and gradient registries).
 */
import '@tensorflow/tfjs';
