// Step 1 of the chapter: weightless self-attention on "Your journey starts
// with one step" (six 3-d embeddings). softmax(X X^T) X, no scaling.
func.func @main(%inputs: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %context = attn.self_attention %inputs : tensor<6x3xf32> -> tensor<6x3xf32>
  return %context : tensor<6x3xf32>
}
