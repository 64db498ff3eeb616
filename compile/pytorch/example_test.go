package pytorch_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/neuro-go/neuro/compile/pytorch"
)

func open(path string) *pytorch.File {
	fh, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	st, _ := fh.Stat()
	f, err := pytorch.Open(fh, st.Size(), nil)
	if err != nil {
		log.Fatal(err)
	}
	return f
}

func ExampleOpen() {
	f := open("internal/torchfile/testdata/mlp_state_dict.pt")
	fmt.Println(f.Kind())
	sd, _ := f.StateDict()
	for _, nt := range sd {
		fmt.Println(nt.Name, nt.Tensor.DType, nt.Tensor.Shape)
	}
	// Output:
	// state_dict
	// 0.weight float32 [3 4]
	// 0.bias float32 [3]
	// 2.weight float32 [2 3]
	// 2.bias float32 [2]
}

func ExampleFile_Modules() {
	f := open("internal/torchfile/testdata/cnn_module.pt")
	mods, _ := f.Modules()
	for _, m := range mods[1:] {
		fmt.Printf("%s %s", m.Path, m.Class)
		for _, p := range m.Params {
			fmt.Printf(" %s%v", p.Name, p.Tensor.Shape)
		}
		fmt.Println()
	}
	conv, _ := mods[1].Hyperparameter("kernel_size")
	eps, _ := mods[2].Hyperparameter("eps")
	fmt.Println("kernel_size", conv, "eps", eps)
	// Output:
	// 0 torch.nn.modules.conv.Conv2d weight[2 1 3 3] bias[2]
	// 1 torch.nn.modules.batchnorm.BatchNorm2d weight[2] bias[2]
	// 2 torch.nn.modules.activation.ReLU
	// 3 torch.nn.modules.pooling.AvgPool2d
	// 4 torch.nn.modules.flatten.Flatten
	// 5 torch.nn.modules.linear.Linear weight[3 8] bias[3]
	// kernel_size [3 3] eps 1e-05
}

func ExampleFile_CodeFiles() {
	f := open("internal/torchfile/testdata/mlp_script.pt")
	fmt.Println(f.Kind(), len(f.CodeFiles()))
	mods, _ := f.Modules()
	for _, m := range mods {
		fmt.Printf("%q %s\n", m.Path, m.Class)
	}
	// Output:
	// torchscript 10
	// "" __torch__.torch.nn.modules.container.Sequential
	// "0" __torch__.torch.nn.modules.linear.Linear
	// "1" __torch__.torch.nn.modules.activation.ReLU
	// "2" __torch__.torch.nn.modules.linear.___torch_mangle_0.Linear
}

func ExampleTensor_Float32s() {
	f := open("internal/torchfile/testdata/views.pt")
	sd, _ := f.StateDict()
	for _, nt := range sd[:2] {
		v, _ := nt.Tensor.Float32s()
		fmt.Println(nt.Name, nt.Tensor.Shape, nt.Tensor.Strides, v)
	}
	// Output:
	// base [3 4] [4 1] [-1 -0.75 -0.5 -0.25 0 0.25 0.5 0.75 1 1.25 1.5 1.75]
	// transposed [4 3] [1 4] [-1 0 1 -0.75 0.25 1.25 -0.5 0.5 1.5 -0.25 0.75 1.75]
}

func ExampleUnpickle() {
	// pickle.dumps of a class whose __reduce__ returns (os.system, ("id",)).
	evil := []byte("\x80\x02cposix\nsystem\nX\x02\x00\x00\x00id\x85R.")
	_, err := pytorch.Unpickle(evil, nil)
	var fe *pytorch.ForbiddenClassError
	fmt.Println(errors.As(err, &fe), fe.Module, fe.Name, fe.Offset)
	fmt.Println(err)
	// Output:
	// true posix system 2
	// pytorch: pickle: offset 2: forbidden class posix.system (not on the allowlist; nothing was called)
}
