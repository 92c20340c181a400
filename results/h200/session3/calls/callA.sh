set -u
export GIT_COMMIT=4edc9a3db616
mkdir -p $OUT/a; cd 06_tensor_core_wmma
t0=$(date +%s)
make -j16 all > $OUT/a/build.log 2>&1; echo "build $? $(( $(date +%s)-t0 ))s"
timeout 150 ./test_06_tensor_core_wmma "[06]" > $OUT/a/test06.log 2>&1; echo "test $?"; grep -E "test cases|assertions" $OUT/a/test06.log | tail -2
timeout 120 ./06_tensor_core_wmma --tune --sizes 4096,8192,1000x1013x4097 --csv $OUT/a/tune.csv > $OUT/a/tune.log 2>&1; echo "tune $?"
grep -E "^(m_|t_128x128_w64x64_k32_s3 |cublas_tf32)" $OUT/a/tune.log | awk '{print $1,$3,$4,$7}'
cuobjdump -sass -arch sm_90 ./06_tensor_core_wmma > /tmp/sass.txt 2>/dev/null
python3 ../tools/sass_loop.py 'Tf32MmaInputsLi128ELi128ELi32ELi64ELi64ELi3ELi4ELi8EELb1' --listing < /tmp/sass.txt > $OUT/a/sass_mma_k32.txt; head -4 $OUT/a/sass_mma_k32.txt | cut -c1-200
M=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_hmma.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,launch__registers_per_thread,sm__inst_issued.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
timeout 90 ncu --clock-control none -k regex:mma_tf32_gemm --metrics $M ./06_tensor_core_wmma --variant tf32_mma_sync --size 4096 --warmup 1 --reps 1 --no-check > $OUT/a/ncu_mma.log 2>&1; echo "ncu $?"
grep -E "duration|hmma_cycles|inst_issued|registers" $OUT/a/ncu_mma.log
