// Package zoo holds the data-parallel models of the optical-network papers — VGG-16/19, ResNet-
// 50/152, AlexNet, LeNet-5, MobileNetV2, BEiT-large, BERT-large — built layer by layer from their
// architectures with partition/nn, each with the parameter count its citing paper states and
// default training-run sizes (dataset, epochs) for time to accuracy.
package zoo
