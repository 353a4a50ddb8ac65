package io.cosched.sample;

import org.springframework.data.jpa.repository.JpaRepository;

interface DepositRepository extends JpaRepository<Deposit, Long> {}
